// The PTY of an interactive shell (interactive.ts): a small program run INSIDE the sandbox (started by the holder's
// outer process like any command, serve-script.ts: in its namespaces and cgroups, as the account the shell runs
// as) with the sandbox's own python3, whose standard `pty` primitives give a real terminal without a native addon
// in the emulator. It opens a pseudo-terminal sized as asked, starts the program on it as a session leader with
// the terminal as its controlling tty (so Ctrl-C from the line discipline interrupts the foreground job, and job
// control works), copies the terminal to stdout, and exits with the program's status (128 + signal when killed).
//
// Its stdin carries frames (ptyFrame): a 1-byte kind and a 4-byte big-endian length, then the payload; kind 0 is
// terminal input, kind 1 a resize (`rows cols`, the kernel then sends SIGWINCH). In-band, because a program of the
// sandbox gets exactly three streams (sandbox-program.ts): a fourth, for resizes only, would widen the program
// protocol (one more socket pair per program, descriptor 3 kept open past the outer's closerange, in both its
// spawn and fork paths) for this one caller, while framing costs five bytes per input chunk and stays in this file.
// When its stdin ends (the connection is gone) it hangs up the terminal's session (SIGHUP, then SIGKILL after a
// grace period), so the connection's end ends the shell.
//
// Arguments: rows cols cwd program [args…]. An empty program means the account's shell from passwd.

/** Frame kinds on the helper's stdin. */
export const PTY_INPUT = 0;
export const PTY_RESIZE = 1;

/** One frame for the helper's stdin: terminal input, or a resize to `rows cols`. */
export function ptyFrame(kind: typeof PTY_INPUT | typeof PTY_RESIZE, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(kind, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

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

# Frames from stdin: a kind byte and a big-endian length, then the payload.
frames = b""
def apply_frames():
    global frames
    while len(frames) >= 5:
        kind, length = struct.unpack(">BI", frames[:5])
        if len(frames) < 5 + length:
            return
        payload, frames = frames[5:5 + length], frames[5 + length:]
        if kind == 0:
            write_all(master, payload)
        elif kind == 1:
            try:
                r, c = (int(x) for x in payload.split())
                size(master, r, c)
            except (ValueError, OSError):
                pass

inputs = [0, master]
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
            frames += data
            try:
                apply_frames()
            except OSError:
                pass
        else:
            inputs.remove(0)
            hangup_at = time.monotonic()
            try:
                os.killpg(pid, signal.SIGHUP)
            except OSError:
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
