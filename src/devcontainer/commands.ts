// Lifecycle command forms (seed 002 "Each lifecycle command supports these forms"), read from located JSONC.
// A string runs through the shell, an array is an executable and its arguments with no shell, and an object
// names commands that run in parallel and must all succeed. Anything else is a fault naming the property.
import type { Node } from "jsonc-parser";
import { childPath, describeNode, faultAt, members, type RecipeText } from "./jsonc.js";

export type ShellCommand = { readonly kind: "shell"; readonly command: string };
export type ExecCommand = { readonly kind: "exec"; readonly argv: readonly string[] };
export type SingleCommand = ShellCommand | ExecCommand;
export type ParallelCommands = {
  readonly kind: "parallel";
  readonly commands: Readonly<Record<string, SingleCommand>>;
};
export type LifecycleCommand = SingleCommand | ParallelCommands;

/** The lifecycle properties of the host-mode subset, in the order a fresh worker would meet them. */
export const PHASE_NAMES = [
  "onCreateCommand",
  "updateContentCommand",
  "postCreateCommand",
  "postStartCommand",
] as const;
export type PhaseName = (typeof PHASE_NAMES)[number];
export type Phases = { readonly [P in PhaseName]?: LifecycleCommand };

const FORMS = "a string (shell), an array of strings (executable and arguments) or an object of named commands";
const FIX = "Fix the property or remove it, then commit again.";

// A string that holds only whitespace has nothing to run; devcontainers/cli skips it the same way.
const isBlank = (text: string) => text.trim() === "";

/**
 * Reads one lifecycle property. Returns undefined when there is nothing to run (null, a blank string, or an
 * object whose commands are all blank), so a phase is present exactly when it has work.
 */
export function readLifecycleCommand(source: RecipeText, node: Node, property: string): LifecycleCommand | undefined {
  if (node.type === "null") return undefined;
  if (node.type === "object") return readParallel(source, node, property);
  return readSingle(source, node, property, FORMS);
}

function readParallel(source: RecipeText, node: Node, property: string): ParallelCommands | undefined {
  const entries: [string, SingleCommand][] = [];
  for (const [name, { value }] of members(node)) {
    const single = readSingle(source, value, childPath(property, name), "a string or an array of strings");
    if (single) entries.push([name, single]);
  }
  // fromEntries defines own properties, so a command named "__proto__" stays an ordinary name.
  return entries.length === 0 ? undefined : { kind: "parallel", commands: Object.fromEntries(entries) };
}

function readSingle(source: RecipeText, node: Node, property: string, forms: string): SingleCommand | undefined {
  if (node.type === "string") {
    const command = node.value as string;
    if (isBlank(command)) return undefined;
    rejectNul(source, node, property, command);
    return { kind: "shell", command };
  }
  if (node.type === "array" && node.children?.length) {
    const argv = node.children.map((element, index) => readArgument(source, element, childPath(property, index)));
    if (isBlank(argv[0]!)) {
      throw faultAt(source, node, property, `${property} names no executable: its first element is blank`, FIX);
    }
    return { kind: "exec", argv };
  }
  throw faultAt(source, node, property, `${property} must be ${forms}, not ${describeNode(node)}`, FIX);
}

function readArgument(source: RecipeText, node: Node, property: string): string {
  if (node.type !== "string") {
    throw faultAt(source, node, property, `${property} must be a string, not ${describeNode(node)}`, FIX);
  }
  const argument = node.value as string;
  rejectNul(source, node, property, argument);
  return argument;
}

// A NUL byte cannot cross exec(2); refusing it here keeps the failure in the owner's file, not at run time.
function rejectNul(source: RecipeText, node: Node, property: string, text: string): void {
  if (text.includes("\0")) {
    throw faultAt(source, node, property, `${property} contains a NUL character`, FIX);
  }
}
