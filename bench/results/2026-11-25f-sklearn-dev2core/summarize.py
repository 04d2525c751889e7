import csv, statistics as st, collections, sys
rows=list(csv.DictReader(open(sys.argv[1])))
spins=sys.argv[2:]
d=collections.defaultdict(list)
for r in rows:
    d[(r['prog'],r['mode'],r['spin'])].append(float(r['secs']))
    if r['rc']!='0': print('FAIL',r)
progs=[]; [progs.append(r['prog']) for r in rows if r['prog'] not in progs]
print("| program | native | one thread | " + " | ".join(f"alone {s} | throttled {s}" for s in spins) + " |")
print("|---|---:|---:|" + "---:|---:|"*len(spins))
for p in progs:
    def m(mo,s):
        v=d[(p,mo,s)]
        return f"{st.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]" if v else "-"
    print(f"| {p} | {m('native','-')} | {m('one','-')} | " + " | ".join(f"{m('alone',s)} | {m('thr',s)}" for s in spins) + " |")
