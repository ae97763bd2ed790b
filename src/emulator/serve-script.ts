// The sandbox's programs, started by its holder's outer process (holder-script.ts `outer`, then `serve`), where each
// used to be a chain of five host programs (a shell joining the sandbox's cgroups, nsenter, setsid, setpriv, bash
// for the working directory). The outer process already is where a program must be: in the sandbox's limited
// groups (joining them costs an RCU grace period, several ms, per migration), in its mount, network, IPC, UTS and
// cgroup namespaces, its root is the sandbox's root (pivot_root moved it with the holder's), and its children are
// born in the sandbox's PID namespace. Once the holder has made the sandbox's user namespace (its descriptor comes
// over `ns`), the outer process enters it as the sandbox's root (enter_sandbox): from then on it holds no privilege
// of the host's, so it may exec the sandbox's files, and it stays outside the sandbox's PID namespace, where no
// process of the sandbox can name, signal or trace it.
//
// A program is then a vfork and exec (spawn: subprocess with no ids of its own, so no copy of this process, which
// on a machine whose page faults trap cost 10-20 ms per program): the outer takes the program's user and that
// user's groups for the call (read from the sandbox's /etc/passwd and /etc/group as bounded data, as initgroups
// finds them in the files; never through the sandbox's NSS modules, which are its code), and the child starts a
// session, takes its streams, closes every other descriptor, changes to its working directory as that user and
// execs with signals as a fresh process has them. Its pid is answered once the program runs. Whatever that path
// cannot start (a missing directory, a name not found, a script without #!, a user database the files do not
// answer) goes by the fork path (program), which says why as a shell would, or runs it: a fork of the outer that
// closes every other descriptor before it reads the user database through NSS, becomes root or the user with the
// user's groups (as `setpriv --init-groups` did), changes directory and execs; its pid once a close-on-exec pipe
// ends at the exec (at most 5 s, so a start that never gets there cannot hold this sandbox's others). Either way a
// detached command is its program by the time it is listed, never a copy of this script.
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
        if userfd is not None:
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
DB_LIMIT = 1 << 20
def rearm_death_signal(parent):
    # A change of this process's credentials clears its parent-death signal (prctl(2)): it is set again after each,
    # and this process leaves if the factory went in between.
    libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)
def enter_sandbox(userfd, parent):
    # The outer process becomes the sandbox's root in the sandbox's user namespace: it keeps no privilege of the
    # host's from here on, and stays outside the sandbox's PID namespace, where no process of the sandbox can name it.
    if libc.setns(userfd, CLONE_NEWUSER) != 0:
        return False
    try:
        os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
    finally:
        rearm_death_signal(parent)
    return True
def read_db(path):
    # A file of the sandbox's, read as data: a regular file, bounded, never a link, a FIFO or a device.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while len(data) <= DB_LIMIT:
            chunk = os.read(fd, DB_LIMIT + 1 - len(data))
            if not chunk:
                return data
            data += chunk
        return None
    finally:
        os.close(fd)
def files_only(conf):
    # Whether the sandbox's nsswitch.conf takes passwd and group from its files alone (systemd's module adds no
    # user of its own where no systemd runs): only then is reading the files what initgroups would find.
    if conf is None:
        return True
    for line in conf.split(b"\\n"):
        fields = line.split(b"#")[0].split()
        if fields and fields[0] in (b"passwd:", b"group:") and not set(fields[1:]) <= {b"files", b"systemd"}:
            return False
    return True
def user_groups(uid, gid):
    # The user's groups as initgroups(name, gid) finds them in the files, or None: the fork path then reads them
    # through the sandbox's own NSS (its code, run only in a child that drops every descriptor first).
    passwd, group = read_db("/etc/passwd"), read_db("/etc/group")
    if passwd is None or group is None or not files_only(read_db("/etc/nsswitch.conf")):
        return None
    name, want = None, str(uid).encode()
    for line in passwd.split(b"\\n"):
        fields = line.split(b":")
        if line[:1] in (b"+", b"-"):
            return None
        if len(fields) >= 3 and fields[2] == want:
            name = fields[0]
            break
    if not name:
        return None
    gids = [gid]
    for line in group.split(b"\\n"):
        fields = line.split(b":")
        if line[:1] in (b"+", b"-"):
            return None
        if len(fields) >= 4 and name in fields[3].split(b","):
            try:
                g = int(fields[2])
            except ValueError:
                continue
            if g not in gids:
                gids.append(g)
    return gids
def spawn(req, devnull, streams, popens, parent):
    # The program by vfork and exec (subprocess with no ids of its own to set: no copy of this process), as the user
    # it runs as, with that user's groups (this process takes them for the call), in its working directory, in a
    # session of its own, its streams on 0-2 and every other descriptor closed, signals as a fresh process has them;
    # its pid once it runs. None when it cannot start this way (a missing directory, a name not found or not
    # executable, a script without #!, a user database the files do not answer): the fork path (program) then
    # starts it or says why, as before. The serve loop reaps it, never subprocess (popens keeps it until then).
    if req.get("root"):
        uid, gid, groups = 0, 0, []
    else:
        uid, gid = int(req["uid"]), int(req["gid"])
        groups = user_groups(uid, gid)
        if groups is None:
            return None
    cwd = req["cwd"]
    env = {str(k): str(v) for k, v in req["env"].items()}
    env["PWD"] = cwd
    argv = [str(a) for a in req["argv"]]
    try:
        os.setgroups(groups)
        os.setresgid(gid, gid, 0)
        os.setresuid(uid, uid, 0)
        child = subprocess.Popen(argv, stdin=streams.get("stdin", devnull), stdout=streams["stdout"],
                                 stderr=streams["stderr"], cwd=cwd, env=env, start_new_session=True)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    finally:
        os.setresuid(0, 0, 0)
        os.setresgid(0, 0, 0)
        os.setgroups([])
        rearm_death_signal(parent)
    popens[child.pid] = child
    return child.pid
def start_program(req, userfd, entered, devnull, runs, popens, parent):
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
        streams = {k: v.fileno() for k, v in mine.items()}
        pid = spawn(req, devnull, streams, popens, parent) if entered else None
        if pid is None:
            pid = fork_program(req, None if entered else userfd, devnull, streams)
        runs[pid] = rid
        send({"run": rid, "pid": pid})
    except OSError as e:
        send({"run": rid, "error": f"could not start the program: {e}"})
    finally:
        for ours in mine.values():
            ours.close()
def fork_program(req, userfd, devnull, streams):
    started_r, started_w = os.pipe2(os.O_CLOEXEC)
    try:
        pid = os.fork()
        if pid == 0:
            program(req, userfd, devnull, streams, started_w)
        os.close(started_w)
        started_w = None
        select.select([started_r], [], [], 5)
        return pid
    finally:
        os.close(started_r)
        if started_w is not None:
            os.close(started_w)
def serve(holder_pid, ctl, ns, devnull, pending):
    parent = os.getppid()
    wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    userfd, entered, runs, popens, holder_status = None, False, {}, {}, None
    def reaped(pid, status):
        code = os.waitstatus_to_exitcode(status)
        child = popens.pop(pid, None)
        if child is not None:
            child.returncode = code
        send({"run": runs.pop(pid), "exit": code})
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
                reaped(pid, status)
        if holder_status is not None:
            while runs:
                try:
                    pid, status = os.waitpid(-1, 0)
                except ChildProcessError:
                    break
                if pid in runs:
                    reaped(pid, status)
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
                    entered = enter_sandbox(userfd, parent)
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
                    start_program(req, userfd, entered, devnull, runs, popens, parent)
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
