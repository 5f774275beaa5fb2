# Sourced by the benchmark scripts: need COMMAND PACKAGE WHY installs Debian's PACKAGE when COMMAND is
# not on the PATH (as root, or through sudo), and fails loudly when it still is not there.
need_command() {
  local command=$1 package=$2 why=$3
  command -v "$command" >/dev/null 2>&1 && return 0
  echo "installing $package ($why)" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null || true
  command -v "$command" >/dev/null 2>&1 || { echo "error: could not install $package (apt-get install -y $package)" >&2; exit 1; }
}
