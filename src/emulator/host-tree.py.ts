// The Python the emulator runs (as host root, through host-spawn.ts) to walk, copy and merge trees a sandbox may
// have written: a drive, an upper layer. Every step goes by file descriptor from the tree's root, which the
// emulator names (a path of its own data dir, no part of it a sandbox's): a directory is opened relative to its
// parent's descriptor with O_NOFOLLOW | O_DIRECTORY, a file with O_NOFOLLOW, and owners, modes and times are
// set on the descriptor (fchown, fchmod, futimens). An entry that is neither a directory nor a regular file (a
// link, an overlay whiteout, a fifo) is changed by name relative to its parent's descriptor without following
// (fchownat AT_SYMLINK_NOFOLLOW), and a link is copied as a link (readlinkat, symlinkat). So a link renamed over
// an entry while the walk runs is never followed: the walk either meets the link as a link or stops with
// `changed` (an opened entry that is not what was stat'ed), and what a directory held when it was opened is what
// is walked, whatever is renamed over its path later. Python, not Node: Node has no openat, fchownat nor
// fstatat; Python's os module has all of them (dir_fd, follow_symlinks=False), and python3 is what the holder
// already needs. Trees deeper than the recursion limit fail the walk (a boot fails; nothing is left half-owned
// on the host's side: only the tree itself is ever changed).
export const HOST_TREE_PY = `import os, stat, sys
DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
class Changed(Exception):
    pass
def mover(frm, to, count):
    if frm < 0:
        return lambda i: i
    return lambda i: i - frm + to if frm <= i < frm + count else i
def lstat_at(pfd, name):
    return os.stat(name, dir_fd=pfd, follow_symlinks=False)
def open_same(pfd, name, st):
    # Opens the entry st describes, never through a link; anything else there now is a change mid-walk.
    flags = DIR if stat.S_ISDIR(st.st_mode) else FILE
    try:
        fd = os.open(name, flags, dir_fd=pfd)
    except OSError as e:
        raise Changed(name) from e
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or stat.S_IFMT(now.st_mode) != stat.S_IFMT(st.st_mode):
        os.close(fd)
        raise Changed(name)
    return fd, now
def names(fd):
    return sorted(os.listdir(fd))
# shift: owners of the range [frm, frm + count) move to the same ids of [to, to + count); set-user/group-ID bits
# that chown clears are set again, on the same descriptor.
def shift_fd(fd, st, move):
    uid, gid = move(st.st_uid), move(st.st_gid)
    if (uid, gid) != (st.st_uid, st.st_gid):
        os.fchown(fd, uid, gid)
        if st.st_mode & 0o6000:
            os.fchmod(fd, stat.S_IMODE(st.st_mode))
def shift_dir(dfd, move):
    for name in names(dfd):
        st = lstat_at(dfd, name)
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            fd, now = open_same(dfd, name, st)
            try:
                shift_fd(fd, now, move)
                if stat.S_ISDIR(now.st_mode):
                    shift_dir(fd, move)
            finally:
                os.close(fd)
        else:
            uid, gid = move(st.st_uid), move(st.st_gid)
            if (uid, gid) != (st.st_uid, st.st_gid):
                os.chown(name, uid, gid, dir_fd=dfd, follow_symlinks=False)
def shift(root, frm, to, count):
    move = mover(frm, to, count)
    fd = os.open(root, DIR)
    try:
        shift_fd(fd, os.fstat(fd), move)
        shift_dir(fd, move)
    finally:
        os.close(fd)
# own-root: everything host root's; directories and executable files 0755, other files 0644.
def own_root_dir(dfd):
    for name in names(dfd):
        st = lstat_at(dfd, name)
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            fd, now = open_same(dfd, name, st)
            try:
                os.fchown(fd, 0, 0)
                os.fchmod(fd, 0o755 if stat.S_ISDIR(now.st_mode) or now.st_mode & 0o111 else 0o644)
                if stat.S_ISDIR(now.st_mode):
                    own_root_dir(fd)
            finally:
                os.close(fd)
        else:
            os.chown(name, 0, 0, dir_fd=dfd, follow_symlinks=False)
def own_root(root):
    fd = os.open(root, DIR)
    try:
        os.fchown(fd, 0, 0)
        os.fchmod(fd, 0o755)
        own_root_dir(fd)
    finally:
        os.close(fd)
# copy: src's tree to dst (made here, so no one else can reach it meanwhile), owners moved by move.
def copy_xattrs(sfd, dfd):
    try:
        keys = os.listxattr(sfd)
    except OSError:
        return
    for key in keys:
        try:
            os.setxattr(dfd, key, os.getxattr(sfd, key))
        except OSError:
            pass
def finish_fd(dfd, st, move):
    os.fchown(dfd, move(st.st_uid), move(st.st_gid))
    os.fchmod(dfd, stat.S_IMODE(st.st_mode))
    os.utime(dfd, ns=(st.st_atime_ns, st.st_mtime_ns))
def copy_data(sfd, dfd):
    while True:
        try:
            n = os.copy_file_range(sfd, dfd, 1 << 30)
        except OSError:
            break
        if n == 0:
            return
    while True:
        chunk = os.read(sfd, 1 << 20)
        if not chunk:
            return
        os.write(dfd, chunk)
class Copier:
    def __init__(self, dst_root_fd, move):
        self.root, self.move, self.links = dst_root_fd, move, {}
    def entry(self, sfd, dfd, name, st, rel):
        mode, move = st.st_mode, self.move
        if stat.S_ISDIR(mode):
            fd, now = open_same(sfd, name, st)
            try:
                os.mkdir(name, 0o700, dir_fd=dfd)
                out = os.open(name, DIR, dir_fd=dfd)
                try:
                    self.tree(fd, out, rel)
                    copy_xattrs(fd, out)
                    finish_fd(out, now, move)
                finally:
                    os.close(out)
            finally:
                os.close(fd)
        elif stat.S_ISREG(mode):
            key = (st.st_dev, st.st_ino)
            if st.st_nlink > 1 and key in self.links:
                os.link(self.links[key], name, src_dir_fd=self.root, dst_dir_fd=dfd, follow_symlinks=False)
                return
            fd, now = open_same(sfd, name, st)
            try:
                out = os.open(name, NEW, 0o600, dir_fd=dfd)
                try:
                    copy_data(fd, out)
                    copy_xattrs(fd, out)
                    finish_fd(out, now, move)
                finally:
                    os.close(out)
            finally:
                os.close(fd)
            if st.st_nlink > 1:
                self.links[key] = rel
        else:
            if stat.S_ISLNK(mode):
                os.symlink(os.readlink(name, dir_fd=sfd), name, dir_fd=dfd)
            elif stat.S_ISCHR(mode) and st.st_rdev == 0:
                os.mknod(name, stat.S_IFCHR | 0o600, 0, dir_fd=dfd)  # an overlay whiteout
            elif stat.S_ISFIFO(mode):
                os.mkfifo(name, 0o600, dir_fd=dfd)
            else:
                return  # a device or a socket: never made on the host from a sandbox's tree
            os.chown(name, move(st.st_uid), move(st.st_gid), dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISLNK(mode):
                # By name: the node was made just now in dst, which no one else reaches (and is no link).
                os.chmod(name, stat.S_IMODE(mode), dir_fd=dfd)
            os.utime(name, ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=dfd, follow_symlinks=False)
    def tree(self, sfd, dfd, rel):
        for name in names(sfd):
            self.entry(sfd, dfd, name, lstat_at(sfd, name), f"{rel}/{name}" if rel else name)
def copy_root(src, dst, move):
    # dst's parent is the emulator's; dst itself must not exist yet.
    sfd = os.open(src, DIR)
    try:
        os.mkdir(dst, 0o700)
        dfd = os.open(dst, DIR)
        try:
            Copier(dfd, move).tree(sfd, dfd, "")
            copy_xattrs(sfd, dfd)
            finish_fd(dfd, os.fstat(sfd), move)
        finally:
            os.close(dfd)
    finally:
        os.close(sfd)
# merge: frozen layers (top first) into dest the way the overlay reads them. The top layer is copied whole
# (whiteouts and opaque marks included); each lower layer then fills in only names no layer above has, descending
# into directories that are directories in both and not opaque above.
def opaque(fd):
    try:
        return os.getxattr(fd, "trusted.overlay.opaque") == b"y"
    except OSError:
        return False
blocked = set()
def underlay(copier, dfd, lfd, rel):
    if opaque(dfd) or rel in blocked:
        return
    for name in names(lfd):
        ls = lstat_at(lfd, name)
        sub = f"{rel}/{name}" if rel else name
        if sub in blocked:
            continue
        try:
            ts = lstat_at(dfd, name)
        except FileNotFoundError:
            copier.entry(lfd, dfd, name, ls, sub)
            continue
        if not (stat.S_ISDIR(ts.st_mode) and stat.S_ISDIR(ls.st_mode)):
            # A whiteout or a file here (or below) hides what layers further down have under this name.
            blocked.add(sub)
        else:
            d, _ = open_same(dfd, name, ts)
            try:
                low, _ = open_same(lfd, name, ls)
                try:
                    underlay(copier, d, low, sub)
                finally:
                    os.close(low)
            finally:
                os.close(d)
def merge(dest, target, count, layers):
    top, base = layers[0]
    copy_root(top, dest, mover(base, target, count))
    dfd = os.open(dest, DIR)
    try:
        for low, base in layers[1:]:
            lfd = os.open(low, DIR)
            try:
                underlay(Copier(dfd, mover(base, target, count)), dfd, lfd, "")
            finally:
                os.close(lfd)
    finally:
        os.close(dfd)
try:
    op, args = sys.argv[1], sys.argv[2:]
    if op == "shift":
        shift(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif op == "own-root":
        own_root(args[0])
    elif op == "copy":
        copy_root(args[0], args[1], mover(int(args[2]), int(args[3]), int(args[4])))
    elif op == "merge":
        rest = args[3:]
        merge(args[0], int(args[1]), int(args[2]), [(rest[i], int(rest[i + 1])) for i in range(0, len(rest), 2)])
    else:
        sys.exit(f"unknown operation {op}")
except Changed as e:
    sys.stderr.write(f"changed during the walk: {e}\\n")
    sys.exit(3)
except OSError as e:
    sys.stderr.write(f"{e.filename or ''}: {e.strerror}\\n")
    sys.exit(1)
`;
