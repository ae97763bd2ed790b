// The program's change of user. A run that carries secrets starts as sandbox root: no process of the sandbox
// account may read a root process's /proc/<pid>/environ, where the secrets stay after process.env forgets
// them. It then becomes the account for everything else (files, npm, the node keep the account's ownership),
// and a process that changed its uid is not dumpable, so its environ, memory and fds stay closed to the
// account's processes for its whole life. The setup code reaches the node through a file in a handoff
// directory of a fresh group: root-owned, readable only through that group, which this run and its children
// (the node) hold and no earlier process of the account does (a leftover agent of a node started before).
export const ACCOUNT_STEPS = String.raw`
/** Creates a directory under the account's home and every missing parent, owned by the account. */
function ownedDirectory(directory) {
  const missing = [];
  for (let at = directory; at !== HOME && !fs.existsSync(at); at = path.dirname(at)) missing.unshift(at);
  for (const dir of missing) {
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, ACCOUNT.uid, ACCOUNT.gid);
  }
}

/** A gid no account names and the account is not in: the handoff's group is this run's alone. */
function freshGroup() {
  const named = new Set(
    fs.readFileSync("/etc/group", "utf8").split("\n").map((line) => Number(line.split(":")[2])),
  );
  // Below 65536: the gids a sandbox maps (the emulator's user namespace maps exactly that many).
  for (;;) {
    const gid = 60000 + randomBytes(2).readUInt16BE(0) % 5000;
    if (!named.has(gid) && gid !== ACCOUNT.gid) return gid;
  }
}

/** The handoff: a root-owned directory and file the fresh group may use, nothing else of the account. */
function handOff(group) {
  const directory = fs.mkdtempSync(path.join(STATE, ".handoff-"));
  fs.chownSync(directory, 0, group);
  fs.chmodSync(directory, 0o770);
  const file = path.join(directory, "setup-code");
  fs.writeFileSync(file, SECRETS.setupCode, { flag: "wx", mode: 0o600 });
  fs.chownSync(file, 0, group);
  fs.chmodSync(file, 0o640);
  return { directory: directory, file: file };
}

/** Root's part, then the account's for the rest of the run; returns the setup code's handoff, if any. */
function becomeAccount() {
  if (ACCOUNT_ERROR) throw ACCOUNT_ERROR;
  if (!ACCOUNT) return null;
  ownedDirectory(RUNTIMES);
  ownedDirectory(STATE);
  removeHandoffs();
  let handoff = null;
  process.initgroups(ACCOUNT.name, ACCOUNT.gid);
  if (PLAN.action === "enroll" && PLAN.mode === "connect" && SECRETS.setupCode) {
    const group = freshGroup();
    handoff = handOff(group);
    process.setgroups(process.getgroups().concat([group]));
  }
  process.setgid(ACCOUNT.gid);
  process.setuid(ACCOUNT.uid);
  Object.assign(process.env, { HOME: HOME, USER: ACCOUNT.name, LOGNAME: ACCOUNT.name });
  return handoff;
}

/** Root's cleanup (evidence run, next secret run): handoff directories left by an earlier run. */
function removeHandoffs() {
  let entries = [];
  try {
    entries = fs.readdirSync(STATE);
  } catch {
    return;
  }
  for (const name of entries) {
    if (name.startsWith(".handoff-")) fs.rmSync(path.join(STATE, name), { recursive: true, force: true });
  }
}
`;
