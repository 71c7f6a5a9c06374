import sys
src=open('/work/main/shaders/attention_coop.wgsl').read()
v=sys.argv[1]
def rep(a,b):
    global src
    assert a in src, a
    src=src.replace(a,b)
if v in ('nosoftmax',):
    rep("""        for (var c = 0u; c < share; c++) {
            mt = max(mt, coop_score(g, row, ipr * c + part, t0, live, lo, stop));
        }""","""        mt = 0.0;""")
    rep("""            let s = coop_score(g, row, j, t0, live, lo, stop);
            let w = select(0.0, exp(s - m), s > NEG_BIG);""","""            let w = 0.5;""")
if v in ('nokv','nov'):
    rep("""        coop_stage(2u, t0, end, g.tile, h, kvb, hdp, kld, lid);
        workgroupBarrier();""","""        workgroupBarrier();""")
if v in ('nokv',):
    rep("""        coop_stage(1u, t0, end, g.tile, h, kvb, hdp, kld, lid);
        workgroupBarrier();""","""        workgroupBarrier();""")
if v in ('nomma',):
    a=src.index("        for (var jb = 0u; jb < g.tile; jb += 16u) {\n            let kb")
    b=src.index("        workgroupBarrier();\n        // The row's max")
    src=src[:a]+src[b:]
    a=src.index("        for (var jb = 0u; jb < g.tile; jb += 16u) {\n            let w = coopLoadT")
    b=src.index("        workgroupBarrier();\n    }\n    // The row's sum")
    src=src[:a]+src[b:]
open('/work/main/shaders/attention_coop.wgsl','w').write(src)
