// Resource ids in the API's shape (`<prefix>_<24 url-safe characters>`): sessions, commands, snapshots. Apart from
// the registry so the executor can name its commands without importing the registry that holds them.
import { randomBytes } from "node:crypto";

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url").replace(/[-_]/g, "x")}`;
}
