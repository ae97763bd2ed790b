// Preparation identity (seed 002): the devcontainer file's Git blob, the fallback script's Git blob, or the
// built-in recipe version with the detected lockfile's blob. Hashing is pure; node:crypto does no I/O.
import { createHash } from "node:crypto";

/** The Git object id of a file's committed bytes: sha1("blob <size>\0" + bytes), as `git hash-object` gives. */
export function gitBlobId(content: string | Uint8Array): string {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  return createHash("sha1").update(`blob ${bytes.byteLength}\0`).update(bytes).digest("hex");
}

/** Scalar facts that together decide one resolved recipe. */
export type IdentityPart = string | number | boolean | null;

// Tags every identity so an identity from one kind of recipe can never equal one from another kind.
const IDENTITY_DOMAIN = "openclaw-vercel-sandbox/recipe-identity";

/** A stable hex identity over an ordered list of facts (JSON encoding keeps the boundaries unambiguous). */
export function identityOf(kind: string, parts: readonly IdentityPart[]): string {
  return createHash("sha256")
    .update(JSON.stringify([IDENTITY_DOMAIN, kind, ...parts]))
    .digest("hex");
}
