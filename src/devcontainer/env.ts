// containerEnv and remoteEnv (seed 002): literal, non-secret strings that extend the minimal setup environment
// of lifecycle commands only. remoteEnv overrides matching containerEnv keys, null removes a variable, and
// nothing is substituted: `${localEnv:HOME}` stays those exact characters.
import type { Node } from "jsonc-parser";
import { childPath, describeNode, faultAt, members, type RecipeText } from "./jsonc.js";

export interface LifecycleEnv {
  /** Variables to set for lifecycle commands, by name (sorted). */
  readonly env: Readonly<Record<string, string>>;
  /** Variables a null value removes from the setup environment (sorted). */
  readonly unset: readonly string[];
}

export const ENV_PROPERTIES = ["containerEnv", "remoteEnv"] as const;
type EnvProperty = (typeof ENV_PROPERTIES)[number];

const FIX = "Use literal string values (or null to remove a variable) and commit again.";

/** Layers containerEnv under remoteEnv; absent or null properties contribute nothing. */
export function readLifecycleEnv(source: RecipeText, nodes: Partial<Record<EnvProperty, Node>>): LifecycleEnv {
  const layered = new Map<string, string | null>();
  for (const property of ENV_PROPERTIES) {
    const node = nodes[property];
    if (!node || node.type === "null") continue;
    for (const [name, value] of readEnvObject(source, node, property)) {
      layered.set(name, value);
    }
  }
  const names = [...layered.keys()].sort();
  return {
    env: Object.fromEntries(
      names.flatMap((name) => {
        const value = layered.get(name);
        return typeof value === "string" ? [[name, value]] : [];
      }),
    ),
    unset: names.filter((name) => layered.get(name) === null),
  };
}

function readEnvObject(source: RecipeText, node: Node, property: EnvProperty): Map<string, string | null> {
  if (node.type !== "object") {
    throw faultAt(source, node, property, `${property} must be an object of variables, not ${describeNode(node)}`, FIX);
  }
  const variables = new Map<string, string | null>();
  for (const [name, { key, value }] of members(node)) {
    const path = childPath(property, name);
    // Such a name cannot be passed to a process environment, so it could never mean what the owner wrote.
    if (name === "" || name.includes("=") || name.includes("\0")) {
      throw faultAt(source, key, path, `${path} is not a usable variable name`, FIX);
    }
    if (value.type === "null") {
      variables.set(name, null);
    } else if (value.type === "string" && !(value.value as string).includes("\0")) {
      variables.set(name, value.value as string);
    } else {
      const what = value.type === "string" ? "a string with a NUL character" : describeNode(value);
      throw faultAt(source, value, path, `${path} must be a literal string or null, not ${what}`, FIX);
    }
  }
  return variables;
}
