/* getloadavg() that reports a machine loaded far beyond its CPUs (64 on every average), preloaded
 * after the shim by tests/omp/test_own_dynamic.py: libgomp's dynamic adjustment, natively, then
 * gives every region a team of one, whatever the machine's real load was in the last 15 minutes. */
#include <stdlib.h>

int getloadavg(double loadavg[], int nelem) {
    if (nelem < 0) return -1;
    int n = nelem < 3 ? nelem : 3;
    for (int i = 0; i < n; ++i) loadavg[i] = 64.0;
    return n;
}
