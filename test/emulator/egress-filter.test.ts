// The direct-egress filter's nftables transactions (egress-filter.ts), built as text: what each change says, that
// nothing but interface names and IPv4 addresses of the expected shape reaches the script, and which tables a
// start sweeps. `nft -c` checks each script's syntax against the installed nft without changing the ruleset.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  EgressFilterError,
  filterTableName,
  linkScript,
  staleTables,
  tableScript,
} from "../../src/emulator/egress-filter.js";

const table = filterTableName(4242);
const check = (script: string) => execFileSync("nft", ["-c", "-f", "-"], { input: script, encoding: "utf8" });

describe("egress filter scripts", () => {
  it("names the table after the emulator's pid", () => {
    expect(table).toBe("vsb_emulator_4242");
  });

  it("drops from a link what is not allowed and forwards nothing to or from it", () => {
    const script = tableScript(table);
    expect(script).toContain(`add rule inet ${table} input iifname @links iifname . ip daddr @allowed accept\n`);
    expect(script).toMatch(/input iifname @links iifname [^\n]+\n[^\n]+ input iifname @links drop\n/);
    expect(script).toContain(`add rule inet ${table} forward iifname @links drop\n`);
    expect(script).toContain(`add rule inet ${table} forward oifname @links drop\n`);
    // Each run replaces the chains' rules (kept sets): a second run must not add the rules twice.
    expect(script.indexOf(`flush chain inet ${table} input`)).toBeLessThan(script.indexOf(" input iifname"));
    expect(script.indexOf(`flush chain inet ${table} forward`)).toBeLessThan(script.indexOf(" forward iifname"));
    expect(script).not.toContain("delete table");
    check(script);
  });

  it("removes a stale table of the same name first when fresh, in the same transaction", () => {
    const script = tableScript(table, true);
    expect(script.split("\n").slice(0, 3)).toEqual([
      `add table inet ${table}`,
      `delete table inet ${table}`,
      `add table inet ${table}`,
    ]);
    check(script);
  });

  it("adds a link's name before its addresses, removes addresses before adding, and its name last", () => {
    const joining = linkScript(table, { link: "v1x1h", join: true, add: ["10.0.0.1", "10.0.0.2"] });
    expect(joining).toBe(
      `add element inet ${table} links { "v1x1h" }\n` +
        `add element inet ${table} allowed { "v1x1h" . 10.0.0.1, "v1x1h" . 10.0.0.2 }\n`,
    );
    const changing = linkScript(table, { link: "v1x1h", add: ["10.0.0.3"], remove: ["10.0.0.1"] });
    expect(changing).toBe(
      `delete element inet ${table} allowed { "v1x1h" . 10.0.0.1 }\n` +
        `add element inet ${table} allowed { "v1x1h" . 10.0.0.3 }\n`,
    );
    const leaving = linkScript(table, { link: "v1x1h", remove: ["10.0.0.2"], leave: true });
    expect(leaving).toBe(
      `delete element inet ${table} allowed { "v1x1h" . 10.0.0.2 }\n` +
        `delete element inet ${table} links { "v1x1h" }\n`,
    );
    expect(linkScript(table, { link: "v1x1h" })).toBe("");
    check(tableScript(table, true) + joining + changing + leaving);
  });

  it("refuses anything but an interface name and IPv4 addresses", () => {
    expect(() => linkScript(table, { link: 'v1" } ; flush ruleset ; #', join: true })).toThrow(EgressFilterError);
    expect(() => linkScript(table, { link: "a-very-long-interface-name" })).toThrow(EgressFilterError);
    expect(() => linkScript(table, { link: "v1x1h", add: ["10.0.0.1 } ; flush ruleset"] })).toThrow(EgressFilterError);
    expect(() => linkScript(table, { link: "v1x1h", add: ["::1"] })).toThrow(EgressFilterError);
  });

  it("sweeps only emulator tables whose process is gone, never its own", () => {
    const listing = [
      "table inet vsb_emulator_10",
      "table inet vsb_emulator_11",
      "table inet vsb_emulator_12",
      "table ip vsb_emulator_13",
      "table inet other_14",
      "table inet vsb_emulator_15x",
      "",
    ].join("\n");
    const alive = (pid: number) => pid === 11;
    expect(staleTables(listing, 12, alive)).toEqual(["vsb_emulator_10"]);
  });
});
