#!/usr/bin/env bash
# One block describing the machine a result came from; every results folder carries it.
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "nproc: $(nproc)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "memory: $(free -g | awk '/Mem:/{print $2" GiB"}')"
echo "kernel: $(uname -r)"
echo "os: $(. /etc/os-release && echo "$PRETTY_NAME")"
echo "tbb: $(dpkg-query -W -f='${Version}' libtbb12 2>/dev/null || echo '?')"
echo "libomp: $(dpkg-query -W -f='${Version}' libomp5-14 2>/dev/null || echo '?')"
echo "libgomp: $(dpkg-query -W -f='${Version}' libgomp1 2>/dev/null || echo '?')"
echo "apshim: $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')"
