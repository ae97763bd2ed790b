// The PTY of an interactive shell (interactive.ts): a small program run INSIDE the sandbox (in its
// namespaces, as the account the shell runs as) with the sandbox's own python3, whose standard `pty`
// primitives give a real terminal without a native addon in the emulator. It opens a pseudo-terminal
// sized as asked, starts the program on it as a session leader with the terminal as its controlling
// tty (so Ctrl-C from the line discipline interrupts the foreground job, and job control works),
// copies stdin to the terminal and the terminal to stdout, applies `rows cols` lines from fd 3 as
// resizes (the kernel sends SIGWINCH), and exits with the program's status (128 + signal when killed).
// When its stdin ends (the connection is gone) it hangs up the terminal's session (SIGHUP, then
// SIGKILL after a grace period), so the connection's end ends the shell.
//
// Arguments: rows cols cwd program [args…]. An empty program means the account's shell from passwd.

export const PTY_HELPER = String.raw`
import errno, fcntl, os, pwd, select, signal, struct, sys, termios, time

rows, cols, cwd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
argv = sys.argv[4:]
if not argv or argv[0] == "":
    argv = [pwd.getpwuid(os.getuid()).pw_shell or "/bin/sh"] + argv[1:]

def size(fd, r, c):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", max(1, min(r, 1000)), max(1, min(c, 1000)), 0, 0))

master, slave = os.openpty()
size(master, rows, cols)
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.closerange(3, 1024)
    try:
        os.chdir(cwd)
    except OSError:
        pass
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, ("%s: %s\r\n" % (argv[0], e.strerror)).encode())
        os._exit(127)
os.close(slave)

def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]

control = b""
inputs = [0, 3, master]
status = None
hangup_at = None
while True:
    if status is None:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = raw
    timeout = 0.05 if status is not None else 0.5
    try:
        ready = select.select(inputs, [], [], timeout)[0]
    except InterruptedError:
        continue
    if master in ready:
        try:
            data = os.read(master, 65536)
        except OSError as e:
            data = b""
        if data:
            write_all(1, data)
            continue
        inputs.remove(master)
    if 0 in ready:
        data = os.read(0, 65536)
        if data:
            write_all(master, data)
        else:
            inputs.remove(0)
            hangup_at = time.monotonic()
            try:
                os.killpg(pid, signal.SIGHUP)
            except OSError:
                pass
    if 3 in ready:
        data = os.read(3, 4096)
        if not data:
            inputs.remove(3)
        control += data
        while b"\n" in control:
            line, control = control.split(b"\n", 1)
            try:
                r, c = (int(x) for x in line.split())
                size(master, r, c)
            except (ValueError, OSError):
                pass
    if hangup_at is not None and time.monotonic() - hangup_at > 2:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    if status is not None and (master not in inputs or not ready):
        break
    if master not in inputs and status is None:
        status = os.waitpid(pid, 0)[1]
        break

code = os.waitstatus_to_exitcode(status)
sys.exit(128 - code if code < 0 else code)
`;
