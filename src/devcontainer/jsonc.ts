// JSONC reading for recipe files: decode the committed bytes, parse with comments and trailing commas, and
// keep node offsets so every later fault can point at a line and column in the file the owner edits.
import { createScanner, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { RecipeError, type RecipeLocation } from "./errors.js";

/** A recipe file's decoded text, kept so faults can be located. */
export interface RecipeText {
  readonly file: string;
  readonly text: string;
}

// jsonc-parser descends recursively; a hostile file of nested brackets would overflow the stack.
// Real devcontainer files nest a handful of levels, so this bound only ever rejects abuse.
const MAX_NESTING = 256;

// jsonc-parser's SyntaxKind is an ambient const enum, which isolated modules cannot read; these are its values.
const OPEN_BRACE = 1;
const CLOSE_BRACE = 2;
const OPEN_BRACKET = 3;
const CLOSE_BRACKET = 4;
const EOF = 17;

const FIX_SYNTAX = "Fix the JSONC syntax (comments and trailing commas are allowed) and commit again.";

/** Decodes committed bytes as UTF-8 (a byte-order mark is dropped, as editors do). */
export function decodeText(file: string, content: string | Uint8Array): RecipeText {
  if (typeof content === "string") {
    return { file, text: content.startsWith("\uFEFF") ? content.slice(1) : content };
  }
  try {
    return { file, text: new TextDecoder("utf-8", { fatal: true }).decode(content) };
  } catch {
    throw new RecipeError({
      file,
      problem: "the file is not valid UTF-8 text",
      remedy: "Save it as UTF-8 and commit again.",
    });
  }
}

/** Parses JSONC into a located tree; the first syntax error becomes a RecipeError. */
export function parseJsonc(source: RecipeText): Node {
  guardNesting(source);
  const errors: ParseError[] = [];
  const root = parseTree(source.text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  // Empty or comment-only text reports "value expected" at its end; say what the owner actually sees.
  const holdsNothing = !root && errors.length === 1 && printParseErrorCode(first!.error) === "ValueExpected";
  if (first && !holdsNothing) {
    throw new RecipeError({
      file: source.file,
      location: locate(source.text, first.offset),
      problem: `JSONC syntax error: ${describeParseError(first)}`,
      remedy: FIX_SYNTAX,
    });
  }
  if (!root) {
    throw new RecipeError({
      file: source.file,
      location: locate(source.text, 0),
      problem: "the file holds no JSON value",
      remedy: "Write a JSON object such as {} and commit again.",
    });
  }
  return root;
}

function guardNesting(source: RecipeText): void {
  const scanner = createScanner(source.text, true);
  let depth = 0;
  for (let kind = scanner.scan(); kind !== EOF; kind = scanner.scan()) {
    if (kind === OPEN_BRACE || kind === OPEN_BRACKET) {
      depth += 1;
      if (depth > MAX_NESTING) {
        throw new RecipeError({
          file: source.file,
          location: locate(source.text, scanner.getTokenOffset()),
          problem: `objects and arrays nest deeper than ${MAX_NESTING} levels`,
          remedy: "Flatten the file and commit again.",
        });
      }
    } else if (kind === CLOSE_BRACE || kind === CLOSE_BRACKET) {
      depth = Math.max(0, depth - 1);
    }
  }
}

function describeParseError(error: ParseError): string {
  // "CloseBraceExpected" → "close brace expected"
  return printParseErrorCode(error.error)
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase();
}

/** Converts a UTF-16 offset into a 1-based line and column; `\n`, `\r\n` and `\r` all end a line. */
export function locate(text: string, offset: number): RecipeLocation {
  const end = Math.min(Math.max(offset, 0), text.length);
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < end; i++) {
    const char = text.charCodeAt(i);
    if (char === 10 || (char === 13 && text.charCodeAt(i + 1) !== 10)) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** One `"key": value` pair of an object, both located. */
export interface Member {
  readonly key: Node;
  readonly value: Node;
}

/** An object's members by key; a repeated key keeps its last value in its first position, as JSON.parse does. */
export function members(node: Node): Map<string, Member> {
  const result = new Map<string, Member>();
  for (const property of node.children ?? []) {
    const [key, value] = property.children ?? [];
    if (key && value && typeof key.value === "string") {
      result.set(key.value, { key, value });
    }
  }
  return result;
}

/** A readable JSON path segment: `a.b` for plain names, `a["x.y"]` otherwise. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** Names a node's JSON type the way an owner would read it in an error message. */
export function describeNode(node: Node): string {
  if (node.type === "null") return "null";
  if (node.type === "array") return node.children?.length ? "an array" : "an empty array";
  if (node.type === "object") return "an object";
  if (node.type === "number") return `a number (${node.value})`;
  if (node.type === "boolean") return `a boolean (${node.value})`;
  return "a string";
}

/** A RecipeError pointing at a node of the parsed file. */
export function faultAt(
  source: RecipeText,
  node: Node,
  property: string,
  problem: string,
  remedy: string,
): RecipeError {
  return new RecipeError({ file: source.file, location: locate(source.text, node.offset), property, problem, remedy });
}
