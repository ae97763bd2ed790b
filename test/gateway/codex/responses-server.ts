// A recording Responses-API server on loopback for the Codex specs: the main job's script (src/main-job/responses.ts)
// answers; every request is recorded (path, headers, the tool names offered, the tool call made) for the test.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { answerResponses, decideRequest, readJson } from "../../../src/main-job/responses.js";

export {
  decide,
  MAX_POLLS,
  REPLY_MARKER,
  RUN_MARKER,
  STREAM_MARKER,
} from "../../../src/main-job/responses.js";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** When it arrived (epoch ms), for phase figures. */
  at: number;
  /** Function tool names the request offered. */
  tools: string[];
  /** The tool call this server answered with, if any. */
  toolCall?: { name: string; arguments: Record<string, unknown> };
  /** The command output the request carried back (the last function_call_output), if any. */
  toolOutput?: string;
}

export interface ResponsesServer {
  /** `http://<host>:<port>/v1`, Codex's `base_url`. */
  readonly baseUrl: string;
  readonly port: number;
  requests(): RecordedRequest[];
  close(): Promise<void>;
}

/** Starts the server on `host` (loopback by default) and a free port. */
export async function startResponsesServer(host = "127.0.0.1"): Promise<ResponsesServer> {
  const recorded: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const entry: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      at: Date.now(),
      tools: [],
    };
    recorded.push(entry);
    if (req.method !== "POST" || !(req.url ?? "").startsWith("/v1/responses")) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not scripted"}}');
      return;
    }
    readJson(req).then(
      (body) => {
        const { tools, decision } = decideRequest(body);
        entry.tools = tools;
        if (decision.call) entry.toolCall = { name: decision.call.name, arguments: decision.call.args };
        if (decision.toolOutput !== undefined) entry.toolOutput = decision.toolOutput;
        answerResponses(res, decision);
      },
      (error: Error) => {
        res
          .writeHead(400, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: error.message } }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://${host}:${port}/v1`,
    port,
    requests: () => [...recorded],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
