// A free loopback port for the gateway under test: the OS picks it (listen on 0), so parallel test files and
// a developer's own gateway on the default port never collide.

import net from "node:net";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port from net.listen(0)"))));
    });
  });
}
