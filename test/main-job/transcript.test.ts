// The reply the host reads back from a session's transcript (Codex mode's chat.send path).
import { describe, expect, it } from "vitest";
import { lastAssistantText } from "../../src/main-job/host.js";

describe("lastAssistantText", () => {
  it("answers the last assistant message's text parts, skipping later tool and user rows", () => {
    const messages = [
      { role: "assistant", content: "an earlier reply" },
      { role: "user", content: [{ type: "text", text: "codex-run: ls" }] },
      { role: "assistant", content: [{ type: "text", text: "codex-reply:" }, { type: "tool_use" }, { text: "a b" }] },
      { role: "tool", content: "out" },
    ];
    expect(lastAssistantText(messages)).toBe("codex-reply:\na b");
  });

  it("falls back past an assistant row without text, and answers empty when there is none", () => {
    expect(
      lastAssistantText([
        { role: "assistant", content: "first" },
        { role: "assistant", content: [] },
      ]),
    ).toBe("first");
    expect(lastAssistantText([null, 7, { role: "user", content: "hi" }])).toBe("");
  });
});
