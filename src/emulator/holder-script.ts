// The holder's one process (isolation.ts): the host's Python, started as PID 1 of the sandbox's new
// namespaces, builds the sandbox's root with system calls (mount, pivot_root, umount2, a user namespace by
// fork + unshare) instead of one mount/mkdir/ln/ip process per step, then execs a shell that stays PID 1.
// One process start per boot, where the shell script it replaces made about thirty.
import { IDMAP_PY } from "./layers.js";

/** Paths and ids the holder is started with (argv), in this order; then the host's real system dirs. */
export const HOLDER_ARGS = ["data", "root", "upper", "work", "image", "image_usr", "base", "count", "node"] as const;

// Runs as the host's root, in the new mount/PID/network/IPC/UTS/cgroup namespaces, until it pivots into the
// sandbox's root. Layer paths are relative to the data dir (the root overlay's to the sandbox's layer dir), so
// the sandbox's mount table names nothing of the host. The overlay mount is retried because the previous
// session's overlay on the same upper dir is released asynchronously after a stop. The user namespace is
// created by a short-lived child and kept open on fd 9 (commands enter it through /proc/<holder>/fd/9), so no
// process of the sandbox's own ids is needed to keep it, and the holder itself stays outside it.
// With LISTEN=1 it also binds the session's egress listener (127.0.0.1, a free port) in the new network
// namespace and hands the socket to the emulator over the Node IPC channel it was started with (NODE_CHANNEL_FD),
// framed as Node frames a net.Server handle (a JSON line, the fd in SCM_RIGHTS), so no Node helper process starts.
export const HOLDER_SCRIPT = `import ctypes, fcntl, os, struct, sys, time, _socket
libc = ctypes.CDLL(None, use_errno=True)
${IDMAP_PY}
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC = 1, 2, 4, 8, 32, 4096, 8192, 16384
# Per-mount flags a read-only remount keeps (statvfs reports them with the same bits as mount(2) takes).
KEPT = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}[os.uname().machine]
def mount(src, dst, fstype=None, flags=0, data=None):
    b = lambda s: None if s is None else s.encode()
    if libc.mount(b(src), b(dst), b(fstype), flags, b(data)) != 0:
        sys.exit(f"mount {dst}: {os.strerror(ctypes.get_errno())}")
def read_only(dst):
    mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY | (os.statvfs(dst).f_flag & KEPT))
data, root, upper, work, image, image_usr, base, count, node = sys.argv[1:10]
dirs, env = sys.argv[10:], os.environ
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
if env.get("LISTEN") == "1":
    listener = _socket.socket(2, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(511)
    channel = _socket.socket(fileno=int(env["NODE_CHANNEL_FD"]))
    message = b'{"cmd":"NODE_HANDLE","type":"net.Server","msg":{"port":%d}}\\n' % listener.getsockname()[1]
    channel.sendmsg([message], [(1, 1, struct.pack("i", listener.fileno()))])
    listener.close()
    channel.close()
os.chdir(data)
os.chdir(env["LAYER_DIR"])
if env.get("IDMAPS"):
    idmap_mounts(env["IDMAPS"], int(count))
overlay = f"lowerdir={env.get('LOWERS', '')}{image}:{node},upperdir={upper},workdir={work},volatile".encode()
n = 0
# volatile: the overlay never syncs its upper layer, so a stop does not wait on a sync of the data dir's whole
# filesystem (unmounting an overlay syncs its upper filesystem); the emulator's data goes with it anyway.
while libc.mount(b"overlay", root.encode(), b"overlay", 0, overlay) != 0:
    n += 1
    if n >= 100:
        sys.exit("overlay mount failed: " + os.strerror(ctypes.get_errno()))
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
# Drives (drives.ts): staged on the fresh /dev tmpfs before the pivot (no sandbox process runs yet and no path of
# the sandbox's own is followed), moved to their paths after it, so a link in the sandbox's files resolves
# inside the sandbox, never on the host.
drives = [line.split("\\t") for line in env.get("DRIVE_MOUNTS", "").split("\\n") if line]
if drives:
    os.mkdir(f"{dev}/.drives")
for i, (src, dst, mode) in enumerate(drives):
    os.mkdir(f"{dev}/.drives/{i}")
    mount(src, f"{dev}/.drives/{i}", None, MS_BIND)
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
fd = userns(f"0 {base} {count}\\n")
os.dup2(fd, 9)
os.close(fd)
os.closerange(3, 9)
os.closerange(10, 65536)
sys.stdout.write("ready\\n")
sys.stdout.flush()
# PID 1 becomes a shell, which reaps the sandbox's orphans as they exit (an exec'd sleep never would: each would
# stay a zombie holding one of the sandbox's limited pids, cgroups.ts, until the sandbox stops).
os.execve("/bin/sh", ["holder", "-c", "while :; do /bin/sleep infinity || :; done"], {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
`;
