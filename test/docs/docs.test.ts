// The docs' shape (issue 46): the README is the users' page, at most 250 lines, with the two commands and a link to
// every page under docs/; docs/architecture.md says where each doc lives; every relative link in the README, the
// docs, the examples' READMEs and the changelog resolves (file and heading); prose stays within 120 columns; no dated
// run log sits in a page (history is in git and CHANGELOG.md). Reads files only; starts no process.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../gateway/openclaw.js";

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), "utf8");
const docPages = readdirSync(path.join(REPO_ROOT, "docs"))
  .filter((name) => name.endsWith(".md"))
  .map((name) => `docs/${name}`);
const exampleReadmes = readdirSync(path.join(REPO_ROOT, "examples"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(path.join(REPO_ROOT, "examples", entry.name, "README.md")))
  .map((entry) => `examples/${entry.name}/README.md`);
const pages = ["README.md", "CHANGELOG.md", ...docPages, ...exampleReadmes];

/** The text outside fenced code blocks (fenced lines become empty, so line numbers hold). */
function outsideCode(text: string): string[] {
  let fenced = false;
  return text.split("\n").map((line) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line;
  });
}

/** Relative Markdown link targets: `[text](target)`, without web and mail addresses. */
function linksIn(text: string): string[] {
  const prose = outsideCode(text)
    .join("\n")
    .replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/.test(target));
}

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  return new Set(
    outsideCode(read(file))
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => slug(line.replace(/^#+ /, ""))),
  );
}

/** Why a link from `page` to `target` does not resolve, or undefined. */
function broken(page: string, target: string): string | undefined {
  const [file, anchor] = target.split("#") as [string, string | undefined];
  const resolved = file === "" ? page : path.normalize(path.join(path.dirname(page), file));
  if (!existsSync(path.join(REPO_ROOT, resolved))) return `${page}: ${target} (no ${resolved})`;
  if (anchor && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) {
    return `${page}: ${target} (no heading #${anchor} in ${resolved})`;
  }
  return undefined;
}

describe("the README", () => {
  const readme = read("README.md");

  it("is at most 250 lines", () => {
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(250);
  });

  it("gives the two commands, the inner loop, and .ci/run runs the test command", () => {
    const block = readme.slice(readme.indexOf("## The two commands"));
    expect(block).toMatch(/^npm start +# .*main job on the embedded emulator/m);
    expect(block).toMatch(/^npm test +# /m);
    expect(block).toContain("`npm run test:fast`");
    expect(read(".ci/run")).toMatch(/^[^#\n]*\bnpm test\b/m);
  });

  it("links every page under docs/ and the example host", () => {
    const linked = new Set(linksIn(readme).map((target) => path.normalize(target.split("#")[0]!)));
    expect(docPages.length).toBeGreaterThan(5);
    expect(docPages.filter((page) => !linked.has(page))).toEqual([]);
    expect(linked).toContain("examples/host");
  });
});

describe("the docs", () => {
  it("docs/architecture.md lists every page under docs/ where each doc lives", () => {
    const architecture = read("docs/architecture.md");
    const map = architecture.slice(architecture.indexOf("## Where each doc lives"));
    expect(map.startsWith("## Where each doc lives")).toBe(true);
    const listed = new Set(linksIn(map).map((target) => `docs/${target}`));
    expect(docPages.filter((page) => page !== "docs/architecture.md" && !listed.has(page))).toEqual([]);
  });

  it("every relative link resolves to a file, and to a heading when it names one", () => {
    const links = pages.flatMap((page) => linksIn(read(page)).map((target) => ({ page, target })));
    expect(links.length).toBeGreaterThan(30);
    expect(links.map(({ page, target }) => broken(page, target)).filter(Boolean)).toEqual([]);
    // The check can fail.
    expect(broken("README.md", "docs/missing.md")).toMatch(/no docs\/missing\.md/);
    expect(broken("README.md", "docs/guide.md#no-such-heading")).toMatch(/no heading/);
    expect(slug("## 5. Security model".replace(/^#+ /, ""))).toBe("5-security-model");
    expect(slug("The worker cap (`maxWorkers`)")).toBe("the-worker-cap-maxworkers");
  });

  it("keep prose within 120 columns (tables and code blocks aside)", () => {
    const long = pages.flatMap((page) =>
      outsideCode(read(page))
        .map((line, i) => ({ at: `${page}:${i + 1}`, line }))
        .filter(({ line }) => line.length > 120 && !line.startsWith("|"))
        .map(({ at, line }) => `${at} (${line.length})`),
    );
    expect(long).toEqual([]);
  });

  it("hold no dated run log (history is in git and CHANGELOG.md)", () => {
    const generated = /<!-- bench-table:[^>]*-->[\s\S]*<!-- \/bench-table -->/;
    const dated = pages
      .filter((page) => page !== "CHANGELOG.md")
      .flatMap((page) =>
        read(page)
          .replace(generated, "")
          .split("\n")
          .map((line, i) => ({ at: `${page}:${i + 1}`, line }))
          .filter(({ line }) => /\b20\d\d-\d\d-\d\d\b/.test(line))
          .map(({ at }) => at),
      );
    expect(dated).toEqual([]);
  });
});
