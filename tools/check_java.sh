#!/usr/bin/env bash
# Spark 3.5 needs a JVM; the project is built and tested on Java 17.
# With no java at all, install Debian's OpenJDK 17 when we are root on a Debian-like machine, else fail
# with a clear message. Another major version only gets a warning (Spark 3.5 also supports 8 and 11).
set -euo pipefail

java_bin=java
if [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then
    java_bin="${JAVA_HOME}/bin/java"
fi

if ! command -v "$java_bin" >/dev/null 2>&1; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "java not found: installing Debian's openjdk-17-jre-headless" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq openjdk-17-jre-headless
        java_bin=java
    else
        echo "error: java not found. Install a Java 17 runtime (Debian: apt-get install openjdk-17-jre-headless)" \
             "or set JAVA_HOME." >&2
        exit 1
    fi
fi

version_line="$("$java_bin" -version 2>&1 | head -n 1)"
# 'openjdk version "17.0.15" 2025-04-15' -> 17 ; 'java version "1.8.0_392"' -> 8
version="$(sed -E 's/.*version "([^"]+)".*/\1/' <<<"$version_line")"
major="${version%%.*}"
if [[ "$major" == 1 ]]; then
    major="$(cut -d. -f2 <<<"$version")"
fi
if [[ "$major" != 17 ]]; then
    echo "warning: expected Java 17, found: $version_line" >&2
fi
