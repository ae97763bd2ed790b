// The program's download: the gateway's runtime artifact, fetched with its bearer token and checked while it
// streams. With a TLS pin, certificate validation is replaced by comparing the peer's SHA-256 fingerprint,
// and that comparison happens on the handshake, BEFORE the request (and so the token) is written. Through
// the sandbox's egress proxy when one is announced (the emulator's; Vercel's firewall is transparent and
// announces none): the artifact URL is always the gateway, never a service on the sandbox itself, so
// NO_PROXY (which lists 127.0.0.1, the sandbox's own loopback) is deliberately not consulted.
export const DOWNLOAD = String.raw`
const PROXY_URL = process.env.HTTPS_PROXY || process.env.https_proxy || process.env.HTTP_PROXY || process.env.http_proxy || "";

/** A TCP connection to host:port, tunnelled through the announced proxy if there is one. */
function openConnection(host, port, signal) {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (!PROXY_URL) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: bare, port: port, signal: signal });
      socket.once("connect", () => resolve(socket));
      socket.once("error", (error) => reject(fail("download", "connection", "could not connect to the gateway at " + host + ":" + port + ": " + error.message)));
    });
  }
  const proxy = new URL(PROXY_URL);
  const authority = (net.isIPv6(bare) ? "[" + bare + "]" : bare) + ":" + port;
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: proxy.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: Number(proxy.port || 80),
      method: "CONNECT",
      path: authority,
      headers: { host: authority },
      agent: false,
      signal: signal,
    });
    request.once("connect", (response, socket) => {
      if (response.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(fail("download", "egress-refused", "the sandbox's egress refused " + authority + " (HTTP " + response.statusCode + "); the gateway's host must be allowed in the sandbox network policy"));
    });
    request.once("error", (error) => reject(fail("download", "connection", "could not reach the gateway at " + authority + " through the sandbox's egress proxy: " + error.message)));
    request.end();
  });
}

/** TLS over an open connection; with a pin, the peer must present exactly that certificate. */
function secure(raw, host, pin) {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      socket: raw,
      servername: net.isIP(bare) ? undefined : bare,
      rejectUnauthorized: !pin,
      ALPNProtocols: ["http/1.1"],
    });
    socket.once("secureConnect", () => {
      if (pin) {
        const seen = String(socket.getPeerCertificate().fingerprint256 || "").replace(/:/g, "").toLowerCase();
        if (seen !== pin) {
          socket.destroy();
          return reject(fail("download", "tls-pin-mismatch", "the gateway's TLS certificate does not match the pinned fingerprint (got sha256 " + seen.slice(0, 16) + "…); nothing was sent. Check that the sandbox reaches the gateway itself and not an intercepting proxy"));
        }
      }
      resolve(socket);
    });
    socket.once("error", (error) => reject(fail("download", "tls", "TLS with the gateway failed: " + error.message)));
  });
}

const HTTP_ADVICE = {
  401: "the gateway refused the bootstrap token (expired or no longer current); the operation's replay brings a fresh one",
  403: "the gateway refused the bootstrap token (expired or no longer current); the operation's replay brings a fresh one",
  404: "the gateway has no artifact with this digest (it may have restarted with another build); replay the operation",
};

/** Failures of the network path itself (a reset, a refused connection): worth another attempt. */
const TRANSIENT = new Set(["truncated", "connection"]);
const DOWNLOAD_ATTEMPTS = 3;

/**
 * Downloads an artifact (by default the runtime) to an exclusive 0600 file, counting and hashing as it streams.
 * A connection that fails or breaks off is tried again (the partial file removed first), up to three attempts
 * within the one download deadline; what the gateway or the checks refuse is not.
 */
async function download(target, artifact = PLAN.artifact, token = SECRETS.token) {
  const signal = AbortSignal.timeout(PLAN.timings.downloadTimeoutMs);
  for (let attempt = 1; ; attempt++) {
    try {
      return await downloadOnce(target, artifact, token, signal);
    } catch (error) {
      if (!(error instanceof StepFailure) || !TRANSIENT.has(error.code) || signal.aborted || attempt >= DOWNLOAD_ATTEMPTS) {
        throw error;
      }
      fs.rmSync(target, { force: true });
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
}

async function downloadOnce(target, artifact, token, signal) {
  const url = new URL(artifact.url);
  const secureUrl = url.protocol === "https:";
  const port = Number(url.port || (secureUrl ? 443 : 80));
  const raw = await openConnection(url.hostname, port, signal);
  const socket = secureUrl ? await secure(raw, url.hostname, artifact.pin) : raw;
  const response = await new Promise((resolve, reject) => {
    const request = (secureUrl ? https : http).request(url, {
      method: "GET",
      headers: { authorization: "Bearer " + token, accept: "application/octet-stream" },
      // No agent: the request must use this socket, already verified (see the pin check above).
      createConnection: () => socket,
      signal: signal,
    });
    request.once("response", resolve);
    request.once("error", (error) => reject(fail("download", "connection", "the request to the gateway failed: " + error.message)));
    request.end();
  });
  if (response.statusCode !== 200) {
    response.destroy();
    const advice = HTTP_ADVICE[response.statusCode] || "the gateway did not serve the artifact; replay the operation";
    throw fail("download", "http-" + response.statusCode, "the gateway answered HTTP " + response.statusCode + ": " + advice);
  }
  const announced = response.headers["content-length"];
  if (announced !== undefined && Number(announced) !== artifact.bytes) {
    response.destroy();
    throw fail("verify", "size-mismatch", "the gateway announced " + announced + " bytes but the descriptor says " + artifact.bytes + "; the artifact is not the one enrollment expects");
  }
  let received = 0;
  const hash = createHash("sha256");
  const counter = new Transform({
    transform(chunk, _encoding, done) {
      received += chunk.length;
      if (received > artifact.bytes) return done(fail("verify", "size-mismatch", "the artifact is larger than the " + artifact.bytes + " bytes the descriptor says"));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(response, counter, fs.createWriteStream(target, { flags: "wx", mode: 0o600 }));
  } catch (error) {
    if (error instanceof StepFailure) throw error;
    throw fail("download", "truncated", "the download broke off after " + received + " of " + artifact.bytes + " bytes (" + (error.code || error.message) + "); replay the operation");
  }
  if (received < artifact.bytes) {
    throw fail("download", "truncated", "the download ended after " + received + " of " + artifact.bytes + " bytes; replay the operation");
  }
  return { bytes: received, sha256: hash.digest("hex"), pinned: Boolean(artifact.pin), proxied: Boolean(PROXY_URL) };
}

function verifyDownload(result, artifact = PLAN.artifact) {
  if (result.bytes !== artifact.bytes) {
    throw fail("verify", "size-mismatch", "the artifact has " + result.bytes + " bytes, the descriptor says " + artifact.bytes);
  }
  if (result.sha256 !== artifact.sha256) {
    throw fail("verify", "sha256-mismatch", "the artifact's SHA-256 is " + result.sha256 + ", the descriptor says " + artifact.sha256 + "; it was not installed");
  }
  return { sha256: result.sha256 };
}
`;
