// The main job's API front, as "Vercel" for VM1: it pipes TLS to the emulator untouched, and notes the enrollment
// secrets VM1's plugin hands to workers in command environments, even when a value is split across two reads.
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiFront, handoverIn, startApiFront } from "../../src/main-job/api-front.js";
import { PROGRAM_ENV } from "../../src/provider/enrollment/program/index.js";

describe("handoverIn", () => {
  it("names the token and setup-code variables of a JSON body, and nothing else", () => {
    const body = JSON.stringify({
      command: "node",
      env: {
        [PROGRAM_ENV.plan]: JSON.stringify({ mode: "connect", [PROGRAM_ENV.token]: "not-this" }),
        [PROGRAM_ENV.token]: "tok_123",
        [PROGRAM_ENV.setupCode]: "eyJzZXR1cCI6MX0",
        [PROGRAM_ENV.workerToken]: "wtok_9",
        HOME: "/home/vercel-sandbox",
      },
    });
    expect(handoverIn(body)).toEqual([
      { name: PROGRAM_ENV.token, value: "tok_123" },
      { name: PROGRAM_ENV.setupCode, value: "eyJzZXR1cCI6MX0" },
      { name: PROGRAM_ENV.workerToken, value: "wtok_9" },
    ]);
  });
});

describe("the front", () => {
  let dir = "";
  let front: ApiFront;
  let upstream: net.Server;
  const received: Buffer[] = [];
  const accepted: net.Socket[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "vsb-front-"));
    upstream = net.createServer((socket) => {
      accepted.push(socket);
      socket.on("data", (chunk) => received.push(chunk));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.address() as net.AddressInfo;
    front = await startApiFront("127.0.0.1", `http://127.0.0.1:${port}`, dir);
  });

  afterAll(async () => {
    try {
      await front?.close();
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => upstream?.close(resolve));
    } finally {
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  });

  it("passes the bytes through and keeps a secret split across two writes", async () => {
    const { port } = new URL(front.url);
    const socket = tls.connect({ host: "127.0.0.1", port: Number(port), ca: front.caPem });
    await new Promise<void>((resolve, reject) => socket.once("secureConnect", resolve).once("error", reject));
    const body = `{"env":{"${PROGRAM_ENV.setupCode}":"setup-code-value-0123456789"}}`;
    const cut = body.indexOf("value-") + 3;
    socket.write(body.slice(0, cut));
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.write(body.slice(cut));
    for (let i = 0; i < 100 && Buffer.concat(received).length < body.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    socket.destroy();
    expect(Buffer.concat(received).toString()).toBe(body);
    expect(front.handedOver()).toEqual([{ name: PROGRAM_ENV.setupCode, value: "setup-code-value-0123456789" }]);
  });
});
