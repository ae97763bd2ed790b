// `sudo` of the emulated sandbox image. Vercel's image gives the default user passwordless sudo; here
// the privileged half is util-linux's `setpriv`, installed set-user-ID sandbox root and executable by
// the `wheel` group only (image.ts), so users created in the sandbox (Sandbox.createUser) cannot use
// it, as on Vercel. The unprivileged half below is the sudo command line the SDK and scripts use:
// `-u user`, `-E`, `-i`, `-s`, `-n`, `-H`, `--`. Root here is root of the sandbox's user namespace
// only. As Vercel configures its sudo (the SDK's README, "Sudo access"): the environment is not reset and
// PATH is left unchanged (`-E` changes nothing); HOME, USER, LOGNAME and SHELL are the target's, and
// SUDO_USER/SUDO_UID/SUDO_GID/SUDO_COMMAND name the caller, as sudo always sets them.

export const SUDO_HELPER = "/usr/libexec/vercel-sandbox/sudo-setpriv";

export const SANDBOX_PATH = "/opt/vercel-sandbox-node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export const SUDO_SCRIPT = `#!/bin/bash
# sudo of the emulated Vercel sandbox (openclaw-vercel-sandbox emulator): see its src/emulator/sudo.ts.
target=root login= shell=
while [ $# -gt 0 ]; do
  case $1 in
    -u) [ $# -ge 2 ] || { echo "sudo: option requires an argument -- 'u'" >&2; exit 1; }; target=$2; shift 2 ;;
    -u?*) target=\${1#-u}; shift ;;
    --user=*) target=\${1#--user=}; shift ;;
    -E|--preserve-env|--preserve-env=*) shift ;;
    -i|--login) login=1; shift ;;
    -s|--shell) shell=1; shift ;;
    -n|--non-interactive|-H|--set-home|-S|--stdin|-k|--reset-timestamp) shift ;;
    -v|--validate) exit 0 ;;
    -V|--version) echo "Sudo version 1.9.15 (emulated)"; exit 0 ;;
    --) shift; break ;;
    -*) echo "sudo: option not supported in the emulated sandbox: $1" >&2; exit 1 ;;
    *) break ;;
  esac
done
if [ ! -x ${SUDO_HELPER} ]; then
  echo "sudo: $(id -un) is not in the sudoers file." >&2; exit 1
fi
entry=$(getent passwd "$target") || { echo "sudo: unknown user $target" >&2; exit 1; }
IFS=: read -r name _ uid gid _ home user_shell <<< "$entry"
if [ -n "$login" ] || [ -n "$shell" ]; then
  if [ $# -gt 0 ]; then set -- "$user_shell" -c "$*"; else set -- "$user_shell"; fi
  [ -n "$login" ] && cd "$home" 2>/dev/null
elif [ $# -eq 0 ]; then
  echo "usage: sudo [-u user] [-E] [-i | -s] [--] command [arg ...]" >&2; exit 1
fi
vars=("HOME=$home" "USER=$name" "LOGNAME=$name" "SHELL=$user_shell" "SUDO_USER=$(id -un)" "SUDO_UID=$(id -u)" "SUDO_GID=$(id -g)" "SUDO_COMMAND=$*")
# This script is bash, which counts itself in SHLVL (its exec counts itself out again): a caller without one gets none.
unset_shlvl=()
[ "\${SHLVL:-1}" = 1 ] && unset_shlvl=(-u SHLVL)
exec ${SUDO_HELPER} --reuid="$uid" --regid="$gid" --init-groups -- /usr/bin/env "\${unset_shlvl[@]}" "\${vars[@]}" "$@"
`;
