// How one OpenClaw gateway (and the CLI calls beside it) runs isolated: its own home, state, config, workspace
// and temp dirs, and none of what an installed gateway does on its own (Bonjour discovery, chat channels,
// respawning itself, shell snapshots, auto-update, colours). VM1's gateway and the real-gateway specs share it.
// Never NODE_COMPILE_CACHE here: openclaw.mjs would re-spawn itself, and the PID held would be a launcher's.

export interface OpenClawDirs {
  home: string;
  stateDir: string;
  configPath: string;
  tmpDir: string;
}

export function isolatedOpenClawEnv(dirs: OpenClawDirs): Record<string, string> {
  return {
    HOME: dirs.home,
    OPENCLAW_HOME: dirs.home,
    OPENCLAW_STATE_DIR: dirs.stateDir,
    OPENCLAW_CONFIG_PATH: dirs.configPath,
    OPENCLAW_WORKSPACE_DIR: `${dirs.stateDir}/workspace`,
    TMPDIR: dirs.tmpDir,
    OPENCLAW_DISABLE_BONJOUR: "1",
    OPENCLAW_SKIP_CHANNELS: "1",
    OPENCLAW_NO_RESPAWN: "1",
    OPENCLAW_EXEC_SHELL_SNAPSHOT: "0",
    OPENCLAW_NO_AUTO_UPDATE: "1",
    NO_COLOR: "1",
  };
}
