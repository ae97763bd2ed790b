// The holders' factory (holder-zygote.ts): one long-lived process of the host's Python per emulator that forks
// each sandbox's holder (isolation.ts) and builds its root with system calls (mount, pivot_root, umount2, a
// user namespace by fork + unshare), where a boot used to start about thirty processes (a shell script's
// mount/mkdir/ln/ip… and the setpriv/unshare wrappers). A boot costs three forks of an already started process,
// all made before the boot is asked for when it takes the spare (spare-pool.ts): the outer process, the holder and
// the user namespace's child wait for it, so such a boot only mounts, maps and pivots.
//
// Protocol, on the Node IPC channel it is started with (NODE_CHANNEL_FD; one JSON object per line, as Node
// frames it): the emulator sends {id, args, env, cgroups}; the factory answers {id, outer} (the host pid of the
// holder's outer process, leader of its own process group), {id, pid} (the host pid of the holder, PID 1 of
// its namespaces), {id, ready: true} or {id, error}, and {id, exit} once the outer process is reaped. With
// env.LISTEN = "1" the holder also binds the session's egress listener (127.0.0.1, a free port) in its new
// network namespace and sends it as Node sends a net.Server handle ({cmd: "NODE_HANDLE", type: "net.Server",
// msg: {id, port}} with the socket in SCM_RIGHTS), so no helper process starts per proxied session.
//
// Lifetime: the factory dies with the emulator (parent-death signal KILL, set before it serves anything); each
// outer process with the factory, each holder with its outer process, and every process of a sandbox with
// its holder (PID 1 of its PID namespace), as `setpriv --pdeathsig KILL unshare --fork --kill-child` did.
import { SANDBOX_OOM_SCORE_ADJ } from "./cgroup-layout.js";
import { IDMAP_PY } from "./layers.js";
import { SERVE_PY } from "./serve-script.js";

// The outer process (forked per sandbox, in the host's namespaces) joins the sandbox's limited groups first, so
// by the time it makes the cgroup namespace its groups become the namespace's `/`; then it makes the new
// mount/PID/network/IPC/UTS/cgroup namespaces (mounts private in the new mount namespace) and forks the holder,
// PID 1 there, waiting for it and leaving with its status. It hands the holder its boot request (on `ns`) once it
// has one; the holder does what needs none first (its name, loopback, its egress listener, the user namespace's
// child, which unshares before the map is known).
// The holder runs as the host's root until it pivots into the sandbox's root and has moved its drives; then,
// before it runs any file of the sandbox's, it becomes the sandbox's root in the sandbox's user namespace
// (become_sandbox_root). Layer paths are relative to the
// data dir (the root overlay's to the sandbox's layer dir), so the sandbox's mount table names nothing of the
// host. The overlay mount is retried because the previous session's overlay on the same upper dir is released
// asynchronously after a stop. The user namespace is created by a short-lived child and kept open on fd 9
// (the outer process gets it over `ns` and enters it), so no process of the sandbox's own ids is needed to keep
// it. Last it execs a shell that stays PID 1 and reaps orphans.
// `warnings` is imported here, once, because `os.execvpe` imports it on first use: each program's child
// (serve-script.ts) imported it again after its fork, reading the module through the sandbox's read-only /usr,
// which cost about 4 ms per program.
export const HOLDER_SCRIPT = `import ctypes, errno, fcntl, json, os, pwd, select, signal, stat, struct, subprocess, sys, time, warnings, _socket
libc = ctypes.CDLL(None, use_errno=True)
${IDMAP_PY}
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 8192, 16384, 1 << 18
# Per-mount flags a read-only remount keeps (statvfs reports them with the same bits as mount(2) takes).
KEPT = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096
NAMESPACES = 0x20000 | 0x20000000 | 0x40000000 | 0x08000000 | 0x04000000 | 0x02000000  # mount pid net ipc uts cgroup
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}[os.uname().machine]
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4
CHANNEL = int(os.environ["NODE_CHANNEL_FD"])
def send(obj, fd=None):
    # A message is written whole: a short write (the channel's buffer full, a signal) goes on with the rest, so the
    # emulator never reads half a line followed by another message.
    line = (json.dumps(obj) + "\\n").encode()
    if fd is not None:
        s = _socket.socket(fileno=CHANNEL)
        try:
            line = line[s.sendmsg([line], [(1, 1, struct.pack("i", fd))]):]
        finally:
            s.detach()
    while line:
        line = line[os.write(CHANNEL, line):]
def die_with_parent():
    parent = os.getppid()
    check(libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0), "prctl")
    if os.getppid() != parent:
        os._exit(1)
def mount(src, dst, fstype=None, flags=0, data=None):
    b = lambda s: None if s is None else s.encode()
    if libc.mount(b(src), b(dst), b(fstype), flags, b(data)) != 0:
        sys.exit(f"mount {dst}: {os.strerror(ctypes.get_errno())}")
def read_only(dst):
    mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY | (os.statvfs(dst).f_flag & KEPT))
def become_sandbox_root(userfd, ns):
    # From its exec on, PID 1 runs the sandbox's own files (its shell and sleep, their loader, whatever the
    # sandbox's /etc/ld.so.preload names), so it holds no privilege of the host's first: it enters the sandbox's
    # user namespace as the sandbox's root. That clears its parent-death signal, so it is set again; the outer
    # process holds the other end of ns until it has the namespace, so ns readable (end of file) means the outer
    # went in between, and the holder leaves. Its outer process (the sandbox's root too, once it enters: serve)
    # may then kill it, as the parent-death signal does.
    # Not dumpable until its exec: its memory still is the host's root's (its user namespace the host's), so no
    # sandbox process may trace it or take its descriptors (the factory's channel) while it finishes the boot.
    check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl")
    check(libc.setns(userfd, CLONE_NEWUSER), "setns user")
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    check(libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0), "prctl")
    if select.select([ns], [], [], 0)[0]:
        os._exit(1)
def holder(id, ns):
    # What does not depend on the sandbox is done before its boot request is read, so a holder made ahead
    # (holder-zygote.ts \`prepare\`) has done it by the time a create or resume asks for it.
    # The inode of its network namespace, sent with \`ready\`: the emulator opens /proc/<pid>/ns/net then and checks it
    # against this (netns-entry.ts), so a reused pid is never taken for this holder.
    netns = os.stat("/proc/self/ns/net").st_ino
    # Its own UTS namespace: the sandbox's name is its own, never the host's.
    with open("/proc/sys/kernel/hostname", "w") as h:
        h.write("sandbox")
    s = _socket.socket(2, 2)
    try:
        ifr = fcntl.ioctl(s.fileno(), 0x8913, b"lo".ljust(40, b"\\0"))
        fcntl.ioctl(s.fileno(), 0x8914, ifr[:16] + struct.pack("H", struct.unpack_from("H", ifr, 16)[0] | 1) + bytes(22))
    except OSError:
        pass
    s.close()
    listener = _socket.socket(2, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(511)
    user = userns_begin()
    line = b""
    while not line.endswith(b"\\n"):
        chunk = ns.recv(65536)
        if not chunk:
            os._exit(1)
        line += chunk
    req = json.loads(line)
    args, env = req["args"], req["env"]
    data, root, upper, work, image, image_usr, base, count, node = args[:9]
    dirs = args[9:]
    if env.get("LISTEN") == "1":
        send({"cmd": "NODE_HANDLE", "type": "net.Server", "msg": {"id": id, "port": listener.getsockname()[1]}}, listener.fileno())
    listener.close()
    os.chdir(data)
    os.chdir(env["LAYER_DIR"])
    if env.get("IDMAPS"):
        idmap_mounts(env["IDMAPS"], int(count))
    overlay = f"lowerdir={env.get('LOWERS', '')}{image}:{node},upperdir={upper},workdir={work},volatile".encode()
    n = 0
    # volatile: the overlay never syncs its upper layer, so a stop does not wait on a sync of the data dir's whole
    # filesystem (unmounting an overlay syncs its upper filesystem); the emulator's data goes with it anyway.
    # A refused mount is retried (the previous session's overlay on the same upper dir is released asynchronously
    # after a stop). The work dir is never emptied here: it is fresh for each boot (isolation.ts prepareLayers),
    # and a mount that finds another's marker in it shares it with a live overlay, whose copy-ups would all fail
    # were its work dir removed (layer-manager.ts runs a sandbox's boots one at a time so that this cannot happen).
    while libc.mount(b"overlay", root.encode(), b"overlay", 0, overlay) != 0:
        err = ctypes.get_errno()
        n += 1
        if n >= 200:
            sys.exit(f"overlay mount failed: {os.strerror(err)} ({len(overlay)} option bytes)")
        time.sleep(0.05)
    os.chdir(data)
    mount("overlay", f"{root}/usr", "overlay", 0, f"lowerdir={image_usr}:/usr")
    for d in dirs:
        mount(f"/{d}", f"{root}/{d}", None, MS_BIND | MS_REC)
        read_only(f"{root}/{d}")
    mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    dev = f"{root}/dev"
    mount("sandbox-dev", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, f"mode=755,size=64k,uid={base},gid={base}")
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        open(f"{dev}/{name}", "w").close()
        mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    for name in ("pts", "shm", "mqueue"):
        os.mkdir(f"{dev}/{name}")
    mount("devpts", f"{dev}/pts", "devpts", 0, "newinstance,ptmxmode=0666,mode=0620")
    mount("sandbox-shm", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size=64m,uid={base},gid={base}")
    # POSIX message queues of the sandbox's own IPC namespace.
    mount("sandbox-mqueue", f"{dev}/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for target, name in (("pts/ptmx", "ptmx"), ("/proc/self/fd", "fd"), ("/proc/self/fd/0", "stdin"),
                         ("/proc/self/fd/1", "stdout"), ("/proc/self/fd/2", "stderr")):
        os.symlink(target, f"{dev}/{name}")
    # Drives (drives.ts): staged on the fresh /dev tmpfs before the pivot (no sandbox process runs yet and no path
    # of the sandbox's own is followed), moved to their paths after it, so a link in the sandbox's files resolves
    # inside the sandbox, never on the host.
    drives = [line.split("\\t") for line in env.get("DRIVE_MOUNTS", "").split("\\n") if line]
    if drives:
        os.mkdir(f"{dev}/.drives")
    for i, (src, dst, mode) in enumerate(drives):
        os.mkdir(f"{dev}/.drives/{i}")
        mount(src, f"{dev}/.drives/{i}", None, MS_BIND)
    # Mapped while /proc is still the host's, through which the child named itself.
    fd = userns_end(user, f"0 {base} {count}\\n")
    os.chdir(root)
    check(libc.syscall(PIVOT_ROOT, b".", b"."), "pivot_root")
    check(libc.umount2(b".", 2), "umount old root")
    os.chdir("/")
    for i, (src, dst, mode) in enumerate(drives):
        os.makedirs(dst, exist_ok=True)
        mount(f"/dev/.drives/{i}", dst, None, MS_MOVE)
        if mode == "ro":
            read_only(dst)
        os.rmdir(f"/dev/.drives/{i}")
    if drives:
        os.rmdir("/dev/.drives")
    os.dup2(fd, 9)
    os.close(fd)
    become_sandbox_root(9, ns)
    # The outer process runs the sandbox's programs (serve): it enters this user namespace by this descriptor.
    ns.sendmsg([b"u"], [(1, 1, struct.pack("i", 9))])
    ns.close()
    send({"id": id, "ready": True, "netns": netns})
    os.closerange(3, 9)
    os.closerange(10, 65536)
    # PID 1 becomes a shell, which reaps the sandbox's orphans as they exit (an exec'd sleep never would: each would
    # stay a zombie holding one of the sandbox's limited pids, cgroups.ts, until the sandbox stops).
    # Its stderr is the factory's, which the sandbox's root could take from the shell (it may trace PID 1, as in a
    # VM): the shell gets /dev/null; the factory's comes back only to say why the exec failed.
    stderr = os.dup(2)
    os.dup2(1, 2)
    try:
        os.execve("/bin/sh", ["holder", "-c", "while :; do /bin/sleep infinity || :; done"], {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    except OSError:
        os.dup2(stderr, 2)
        raise
def outer(id, req, ctl):
    os.setsid()
    die_with_parent()
    for procs in req["cgroups"]:
        try:
            with open(procs, "w") as h:
                h.write(str(os.getpid()))
        except OSError as e:
            sys.exit(f"could not join {procs}: {e.strerror}")
    try:
        with open("/proc/self/oom_score_adj", "w") as h:
            h.write("${SANDBOX_OOM_SCORE_ADJ}")
    except OSError:
        pass
    devnull = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
    check(libc.unshare(NAMESPACES), "unshare")
    check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "private mounts")
    ns, ns_holder = _socket.socketpair(1, 1)
    pid = os.fork()
    if pid == 0:
        try:
            ctl.close()
            ns.close()
            die_with_parent()
            holder(id, ns_holder)
        except SystemExit as e:
            send({"id": id, "error": str(e.code)})
        except BaseException as e:
            send({"id": id, "error": f"{type(e).__name__}: {e}"})
        os._exit(1)
    ns_holder.close()
    send({"id": id, "pid": pid})
    pending = b""
    if "args" not in req:
        req, pending = boot_request(ctl)
    ns.sendall(json.dumps({"args": req["args"], "env": req["env"]}).encode() + b"\\n")
    serve(pid, ctl, ns, devnull, pending)
${SERVE_PY}
def boot_request(ctl):
    # A prepared outer process (holder-zygote.ts \`prepare\`): in its groups and namespaces already, it waits for the
    # sandbox it is to boot.
    pending = b""
    while True:
        chunk = ctl.recv(65536)
        if not chunk:
            os._exit(1)
        pending += chunk
        *lines, pending = pending.split(b"\\n")
        for i, line in enumerate(lines):
            boot = json.loads(line).get("boot")
            if boot is not None:
                return boot, b"\\n".join(lines[i + 1:] + [pending])
def start(req):
    id = req["id"]
    ctl, ctl_outer = _socket.socketpair(1, 1)
    pid = os.fork()
    if pid:
        ctl_outer.close()
        # Never blocks the factory: what the outer process has not read yet waits in its own queue (forward).
        ctl.setblocking(False)
        ctls[id] = ctl
        queues[id] = bytearray()
        return pid
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(wake_r)
        os.close(wake_w)
        ctl.close()
        for other in ctls.values():
            other.close()
        outer(id, req, ctl_outer)
    except SystemExit as e:
        send({"id": id, "error": str(e.code)})
    except BaseException as e:
        send({"id": id, "error": f"{type(e).__name__}: {e}"})
    os._exit(1)
# What may wait for one outer process that does not read its requests (its sandbox's CPU quota throttles it, it
# is stuck in a start): past this, its next requests fail at once, and no other sandbox waits for it.
QUEUE_LIMIT = 16 << 20
def forward(req, line):
    # A program to run in (or a signal for a program of) a holder's sandbox goes to that holder's outer process,
    # through its queue: a blocking send to one slow outer process used to stall every boot and command.
    id = req["holder"]
    queue = queues.get(id)
    if queue is None or len(queue) + len(line) >= QUEUE_LIMIT:
        refuse(req, "the sandbox is gone" if queue is None else "the sandbox is not taking requests")
        return
    queue += line + b"\\n"
    flush(id)
def refuse(req, reason):
    if "run" in req:
        send({"run": req["run"], "error": f"could not start the program: {reason}"})
def flush(id):
    queue = queues[id]
    try:
        while queue:
            del queue[:ctls[id].send(queue)]
    except BlockingIOError:
        pass
    except OSError:
        # The outer process is gone: its exit is reported when it is reaped, and the emulator ends its programs.
        queue.clear()
die_with_parent()
wake_r, wake_w = os.pipe()
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *_: None)
outers, ctls, queues, pending = {}, {}, {}, b""
while True:
    waiting = [ctls[id] for id, queue in queues.items() if queue]
    ready, writable, _ = select.select([CHANNEL, wake_r], waiting, [])
    for ctl in writable:
        flush(next(id for id, c in ctls.items() if c is ctl))
    if wake_r in ready:
        os.read(wake_r, 4096)
    while outers:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            break
        if pid in outers:
            gone = outers.pop(pid)
            ctls.pop(gone).close()
            queues.pop(gone)
            send({"id": gone, "exit": os.waitstatus_to_exitcode(status)})
    if CHANNEL in ready:
        chunk = os.read(CHANNEL, 65536)
        if not chunk:
            os._exit(0)
        pending += chunk
        *lines, pending = pending.split(b"\\n")
        for line in lines:
            req = json.loads(line)
            if isinstance(req, dict) and "holder" in req and "cmd" not in req:
                forward(req, line)
            elif isinstance(req, dict) and "id" in req and "cmd" not in req:
                pid = start(req)
                outers[pid] = req["id"]
                send({"id": req["id"], "outer": pid})
`;
