// `runCommand({ sudo: true })` runs the command through the image's sudo, which Vercel configures so that the
// environment is not reset, PATH is left unchanged and HOME is /root (the SDK's README, "Sudo access"). sudo itself
// always tells the command who called it: SUDO_USER, SUDO_UID and SUDO_GID name the sandbox's default user. So a
// command under sudo sees the same environment as without it, but for who it runs as and who asked.
import { describe, expect, it } from "vitest";
import { connect, SDKS, type Sdk, useEmulator } from "./harness.js";

const emulator = useEmulator();

type Box = Awaited<ReturnType<Sdk["Sandbox"]["create"]>>;

async function envOf(box: Box, sudo: boolean, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const done = await box.runCommand({ cmd: "sh", args: ["-c", "env -0"], sudo, env });
  expect(done.exitCode).toBe(0);
  const pairs = (await done.stdout()).split("\0").filter(Boolean);
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
}

describe.each(SDKS)("the environment of a command under sudo (SDK %s)", (_, sdk) => {
  it("is the default user's, PATH included, plus root's HOME/USER/LOGNAME and SUDO_USER/SUDO_UID/SUDO_GID of the caller", async () => {
    const box = await sdk.Sandbox.create({ ...connect(emulator()), env: { FROM_SANDBOX: "kept" } });
    try {
      const ids = await box.runCommand({ cmd: "sh", args: ["-c", "id -un; id -u; id -g"] });
      const [user, uid, gid] = (await ids.stdout()).trim().split("\n");
      const plain = await envOf(box, false, { FROM_COMMAND: "kept too" });
      const sudo = await envOf(box, true, { FROM_COMMAND: "kept too" });
      expect(user).toBe("vercel-sandbox");
      expect(Object.keys(plain).filter((k) => k.startsWith("SUDO_"))).toEqual([]);
      expect(sudo).toMatchObject({ HOME: "/root", USER: "root", LOGNAME: "root" });
      expect({ SUDO_USER: sudo.SUDO_USER, SUDO_UID: sudo.SUDO_UID, SUDO_GID: sudo.SUDO_GID }).toEqual({
        SUDO_USER: user,
        SUDO_UID: uid,
        SUDO_GID: gid,
      });
      // Not reset: everything else is exactly what the command sees without sudo, PATH first of all.
      const { HOME, USER, LOGNAME, SUDO_USER, SUDO_UID, SUDO_GID, ...rest } = sudo;
      const { HOME: _h, USER: _u, LOGNAME: _l, ...plainRest } = plain;
      expect(rest).toEqual(plainRest);
      expect(rest.PATH?.split(":")).toContain("/usr/bin");
      expect(rest.FROM_SANDBOX).toBe("kept");
      expect(rest.FROM_COMMAND).toBe("kept too");
      // A PATH the caller gives is left as given under sudo too.
      expect((await envOf(box, true, { PATH: "/opt/own/bin:/usr/bin:/bin" })).PATH).toBe("/opt/own/bin:/usr/bin:/bin");
    } finally {
      await box.delete();
    }
  }, 60_000);

  it("the image's own sudo, run by the default user, keeps the environment and PATH too, and names its caller", async () => {
    const box = await sdk.Sandbox.create({ ...connect(emulator()) });
    try {
      const env = { PATH: "/opt/own/bin:/usr/local/bin:/usr/bin:/bin", FROM_COMMAND: "kept" };
      const plain = await envOf(box, false, env);
      const inBox = await box.runCommand({ cmd: "sudo", args: ["env", "-0"], env });
      expect(inBox.exitCode).toBe(0);
      const pairs = (await inBox.stdout()).split("\0").filter(Boolean);
      const sudo = Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
      expect(sudo).toMatchObject({ HOME: "/root", USER: "root", LOGNAME: "root", SUDO_USER: "vercel-sandbox" });
      expect(sudo.SUDO_COMMAND).toBe("env -0");
      const { HOME, USER, LOGNAME, SHELL, SUDO_USER, SUDO_UID, SUDO_GID, SUDO_COMMAND, ...rest } = sudo;
      const { HOME: _h, USER: _u, LOGNAME: _l, SHELL: _s, ...plainRest } = plain;
      expect(rest).toEqual(plainRest);
      expect(rest.PATH).toBe(env.PATH);
    } finally {
      await box.delete();
    }
  }, 60_000);
});
