// The sandbox's programs, started by its holder's outer process (holder-script.ts `outer`, then `serve`), where each
// used to be a chain of five host programs (a shell joining the sandbox's cgroups, nsenter, setsid, setpriv, bash
// for the working directory). The outer process already is where a program must be: in the sandbox's limited
// groups (joining them costs an RCU grace period, several ms, per migration), in its mount, network, IPC, UTS and
// cgroup namespaces, its root is the sandbox's root (pivot_root moved it with the holder's), and its children are
// born in the sandbox's PID namespace. So a program is one fork of it: the child enters the sandbox's user
// namespace (its descriptor comes from the holder over `ns`), starts a session (its own process group), takes its
// streams and closes every other descriptor (before it reads the sandbox's user database, whose NSS modules are the
// sandbox's own code), becomes sandbox root or the default user with that user's groups (as `setpriv
// --init-groups` did), changes to its working directory as that user, and execs the program with signals as a
// fresh process has them. Its pid is reported once the program runs (a close-on-exec pipe ends at the exec, or at
// its failure), as a real sandbox answers a command: a detached command is its program by the time it is listed,
// never a copy of this script (at most 5 s, so a start that never gets there cannot hold this sandbox's others).
//
// Protocol: the factory forwards the emulator's lines for this holder on `ctl`: {run, argv, env, cwd, root, uid,
// gid, stdin} starts a program; {kill, signal} signals its process group (only while it is unreaped, so a reused
// pid is never signalled). The outer answers on the factory's channel: one {cmd: "NODE_HANDLE", type:
// "net.Socket", msg: {run, stream}} per stream (the emulator's end of a socket pair, as Node's own stdio pipes
// are), then {run, pid} and, once reaped, {run, exit}; or {run, error}. When the holder (PID 1) ends, the kernel
// kills every program of the namespace: each is reported as it is reaped, then the outer leaves with the holder's
// status.
export const SERVE_PY = `def program(req, userfd, devnull, streams, started):
    try:
        os.chdir("/")
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.setsid()
        check(libc.setns(userfd, CLONE_NEWUSER), "setns user")
        started = fcntl.fcntl(started, fcntl.F_DUPFD_CLOEXEC, 3)
        os.dup2(streams.get("stdin", devnull), 0)
        os.dup2(streams["stdout"], 1)
        os.dup2(streams["stderr"], 2)
        if started != 3:
            os.dup2(started, 3, inheritable=False)
        os.closerange(4, 65536)
        if req.get("root"):
            os.setgroups([])
            os.setgid(0)
            os.setuid(0)
        else:
            uid, gid = int(req["uid"]), int(req["gid"])
            try:
                name = pwd.getpwuid(uid).pw_name
            except KeyError:
                sys.exit(f"uid {uid} not found in the sandbox's /etc/passwd")
            os.initgroups(name, gid)
            os.setgid(gid)
            os.setuid(uid)
        cwd = req["cwd"]
        try:
            os.chdir(cwd)
        except OSError as e:
            os.write(2, f"cd: {cwd}: {e.strerror}\\n".encode())
            os._exit(1)
        env = {str(k): str(v) for k, v in req["env"].items()}
        env["PWD"] = cwd
        argv = [str(a) for a in req["argv"]]
        try:
            os.execvpe(argv[0], argv, env)
        except OSError as e:
            if e.errno == errno.ENOEXEC and e.filename:
                os.execve("/bin/sh", ["sh", e.filename] + argv[1:], env)
            raise
    except OSError as e:
        name = str(req["argv"][0])
        missing = e.errno == errno.ENOENT
        reason = "command not found" if missing and "/" not in name else e.strerror
        os.write(2, f"{name}: {reason}\\n".encode())
        os._exit(127 if missing else 126)
    except SystemExit as e:
        os.write(2, f"{e.code}\\n".encode())
    except BaseException as e:
        os.write(2, f"{type(e).__name__}: {e}\\n".encode())
    os._exit(126)
def start_program(req, userfd, devnull, runs):
    rid = req["run"]
    if userfd is None:
        send({"run": rid, "error": "the sandbox is not ready"})
        return
    mine = {}
    try:
        for stream in (["stdin"] if req.get("stdin") else []) + ["stdout", "stderr"]:
            ours, theirs = _socket.socketpair(1, 1)
            mine[stream] = ours
            try:
                send({"cmd": "NODE_HANDLE", "type": "net.Socket", "msg": {"run": rid, "stream": stream}}, theirs.fileno())
            finally:
                theirs.close()
        started_r, started_w = os.pipe2(os.O_CLOEXEC)
        try:
            pid = os.fork()
            if pid == 0:
                program(req, userfd, devnull, {k: v.fileno() for k, v in mine.items()}, started_w)
            runs[pid] = rid
            os.close(started_w)
            started_w = None
            select.select([started_r], [], [], 5)
        finally:
            os.close(started_r)
            if started_w is not None:
                os.close(started_w)
        send({"run": rid, "pid": pid})
    except OSError as e:
        send({"run": rid, "error": f"could not start the program: {e}"})
    finally:
        for ours in mine.values():
            ours.close()
def serve(holder_pid, ctl, ns, devnull, pending):
    wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    userfd, runs, holder_status = None, {}, None
    while True:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            if pid == holder_pid:
                holder_status = os.waitstatus_to_exitcode(status)
            elif pid in runs:
                send({"run": runs.pop(pid), "exit": os.waitstatus_to_exitcode(status)})
        if holder_status is not None:
            while runs:
                try:
                    pid, status = os.waitpid(-1, 0)
                except ChildProcessError:
                    break
                if pid in runs:
                    send({"run": runs.pop(pid), "exit": os.waitstatus_to_exitcode(status)})
            for rid in runs.values():
                send({"run": rid, "exit": -9})
            os._exit(holder_status & 255)
        watched = [wake_r, ctl.fileno()] + ([ns.fileno()] if ns is not None else [])
        ready = select.select(watched, [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 4096)
        if ns is not None and ns.fileno() in ready:
            _, anc, _, _ = ns.recvmsg(1, _socket.CMSG_SPACE(4))
            for level, kind, data in anc:
                if level == 1 and kind == 1:
                    userfd = struct.unpack("i", data[:4])[0]
                    os.set_inheritable(userfd, False)
            ns.close()
            ns = None
        if ctl.fileno() in ready:
            chunk = ctl.recv(65536)
            if not chunk:
                os._exit(1)
            pending += chunk
            *lines, pending = pending.split(b"\\n")
            for line in lines:
                req = json.loads(line)
                if "run" in req:
                    start_program(req, userfd, devnull, runs)
                elif "kill" in req:
                    for pid, rid in runs.items():
                        if rid == req["kill"]:
                            try:
                                os.killpg(pid, int(req["signal"]))
                            except ProcessLookupError:
                                try:
                                    os.kill(pid, int(req["signal"]))
                                except ProcessLookupError:
                                    pass
`;
