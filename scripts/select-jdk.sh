# Sourced by ./exactly and .ci/run: exports JAVA_HOME pointing at a JDK >= 21 (the project targets
# --release 21). Keeps a suitable JAVA_HOME; otherwise looks in /usr/lib/jvm and /opt; fails loudly.
java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'
}
select_jdk() {
  local candidate major
  for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-21-jdk-amd64 \
                   /usr/lib/jvm/java-25-openjdk-amd64 /usr/lib/jvm/java-21-openjdk-amd64 /usr/lib/jvm/* /opt/*jdk*; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/javac" ] || continue
    major=$(java_major "$candidate")
    if [ -n "$major" ] && [ "${major%%.*}" -ge 21 ]; then
      export JAVA_HOME="$candidate"
      export PATH="$JAVA_HOME/bin:$PATH"
      return 0
    fi
  done
  echo "error: Exactly needs a JDK 21 or newer; set JAVA_HOME to one" >&2
  return 1
}
