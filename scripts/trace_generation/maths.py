"""Families that solve maths and logic problems: math-word-problem, geometry-diagram, handwritten-math and logic-puzzle
(solved by brute force, uniqueness checked)."""

from __future__ import annotations

import math
from itertools import permutations, product

from .common import Deck, fmt, pick, qy, st, tr


# ----------------------------------------------------------------------------------------------------------------
# math word problems
# ----------------------------------------------------------------------------------------------------------------
def _wp(rng, kind):
    if kind == "pipes":
        a, b = pick(rng, [(3, 6), (4, 12), (6, 9), (5, 20), (10, 15), (8, 24)])
        r = a * b / (a + b)
        q = pick(rng, [f"A tap fills a tank in {a} hours and a second tap fills it in {b} hours. How long do they "
                       "take together?",
                       f"Pipe A can fill a pool in {a} h, pipe B in {b} h. Both are opened at once - how long until "
                       "the pool is full?"])
        code = f"1 / (1/{a} + 1/{b})"
        return q, code, f"{fmt(r)} hours", "add rates, not times", "work-rate"
    if kind == "trains":
        d, v1, v2 = pick(rng, [300, 420, 540, 600]), pick(rng, [60, 80, 90]), pick(rng, [100, 120, 150])
        t = d / (v1 + v2)
        q = (f"Two trains start {d} km apart and travel toward each other at {v1} km/h and {v2} km/h. After how "
             "long do they meet, and how far has the slower one travelled?")
        code = f"t = {d} / ({v1} + {v2}); (t, {v1} * t)"
        return q, code, f"after {fmt(t)} h; the slower train has covered {fmt(v1 * t)} km", \
            "closing speed is the sum of speeds", "relative motion"
    if kind == "discount":
        p, x, y = pick(rng, [80, 120, 249, 360, 75]), pick(rng, [10, 20, 25, 30]), pick(rng, [10, 15, 20])
        final = p * (1 - x / 100) * (1 - y / 100)
        q = pick(rng, [f"A jacket costs ${p}. It's reduced by {x}% and then a further {y}% at checkout. What do I "
                       "pay, and what is the total discount in percent?",
                       f"A shop takes {x}% off a ${p} item, then another {y}% off the reduced price. Final price?"])
        code = f"f = {p} * (1 - {x}/100) * (1 - {y}/100); (f, 100 * (1 - f/{p}))"
        return q, code, f"${fmt(final)} (total discount {fmt(100 * (1 - final / p), 1)}%, not {x + y}%)", \
            "successive discounts multiply", "percentages"
    if kind == "interest":
        p, r, n = pick(rng, [1000, 2500, 5000, 12000]), pick(rng, [2, 3.5, 4, 5]), pick(rng, [3, 5, 8, 10])
        amt = p * (1 + r / 100) ** n
        q = (f"If I invest ${p:,} at {fmt(r)}% interest compounded annually, how much will I have after {n} years?")
        code = f"{p} * (1 + {r}/100) ** {n}"
        return q, code, f"${fmt(amt)}", "compound, not simple interest", "compound interest"
    if kind == "avgspeed":
        v1, v2 = pick(rng, [(40, 60), (30, 70), (50, 75), (60, 90), (45, 55)])
        avg = 2 * v1 * v2 / (v1 + v2)
        q = pick(rng, [f"I drove to the coast at {v1} km/h and came back on the same road at {v2} km/h. What was my "
                       "average speed for the round trip?",
                       f"A car goes out at {v1} km/h and returns at {v2} km/h over the same distance. What is "
                       "its average speed overall?"])
        code = f"2 * {v1} * {v2} / ({v1} + {v2})"
        return q, code, f"{fmt(avg)} km/h (harmonic mean, not {fmt((v1 + v2) / 2)})", \
            "average speed is total distance over total time", "average speed"
    # mixture
    v1, c1, c2, target = pick(rng, [(2, 10, 40, 25), (3, 5, 20, 15), (4, 12, 30, 18), (5, 8, 20, 12)])
    x = v1 * (target - c1) / (c2 - target)
    q = (f"How many litres of a {c2}% salt solution must be added to {v1} L of a {c1}% solution to get a {target}% "
         "solution?")
    code = f"solve({c1}/100*{v1} + {c2}/100*x - {target}/100*({v1}+x), x)"
    return q, code, f"{fmt(x)} L", "balance the amount of solute", "mixtures"


def fam_math(rng):
    good, bad, queries = [], [], []
    kinds = ["pipes", "trains", "discount", "interest", "avgspeed", "mixture", "pipes", "discount", "avgspeed",
             "interest", "trains"]
    seen = set()
    deck = Deck(rng)
    for i, kind in enumerate(kinds):
        while True:
            q, code, ans, trap, topic = _wp(rng, kind)
            if q not in seen:
                seen.add(q)
                break
        with_img = i % 4 == 3
        steps = [st(f"Set up the model: {trap}.", "python", f"# sympy / plain arithmetic\n{code}",
                    ans.split(" (")[0].replace("$", "")),
                 st("Sanity-check with a quick estimate / substitution.", "calculator",
                    "plug the result back into the original conditions", "consistent")]
        if with_img:
            steps.insert(0, st("Read the problem text from the worksheet photo.", "ocr", "image_1", q))
        reas = (f"This is a {topic} problem; the key is that {trap}. The equation was written explicitly and solved "
                "in code rather than by intuition, then the answer was substituted back to check it satisfies the "
                "conditions. The common wrong shortcut (adding times/percentages or averaging speeds) was avoided.")
        photo_q = deck("img", ["Solve the word problem in the photo.", "Can you work out the exercise on this "
                               "worksheet?", "Please help with the homework question in the picture.",
                               f"How do I solve this {topic} problem from my textbook (photo)?"])
        good.append(tr(photo_q if with_img else q, f"solve a {topic} word problem",
                       steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A photo of a maths worksheet: '{q}'" if with_img else None))
    bad.append(tr("I cycled to work at 12 km/h and back at 18 km/h. What was my average speed?",
                  "solve an average speed word problem",
                  [st("Average the two speeds.", "calculator", "(12 + 18) / 2", "15"),
                   st("Done.", "python", "print(15)", "15")],
                  "Took the mean of the two speeds.", "15 km/h"))
    bad.append(tr("A $200 coat is discounted 20% and then another 20%. What's the price?",
                  "solve a percentages word problem",
                  [st("Total discount is 40%.", "calculator", "200 * (1 - 0.40)", "120"),
                   st("Check.", "python", "200*0.6", "120.0")],
                  "Added the discounts.", "$120"))
    queries.append(qy("Hose 1 fills the paddling pool in 45 minutes, hose 2 takes 90 minutes. With both running, "
                      "how many minutes?", "combined work rate problem"))
    queries.append(qy("ok so sneakers were 140 bucks, 35% off then an extra 10% coupon on top. what do i actually "
                      "pay", "stacked discount calculation"))
    queries.append(qy("小明以每小时4公里的速度上山，再以每小时6公里的速度沿原路下山，全程平均速度是多少？",
                      "求往返平均速度", lang="zh"))
    queries.append(qy("Solve it.", "word problem", images=1, caption_only=True,
                      caption="Photo of a textbook exercise: 'Two cyclists start 90 km apart and ride towards each "
                              "other at 14 km/h and 16 km/h. When do they meet?'"))
    queries.append(qy("If my grandmother put 8,000 euros into a savings account paying 2.75% a year, compounded "
                      "yearly, what's it worth after 12 years?", "compound growth problem"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# geometry from a diagram
# ----------------------------------------------------------------------------------------------------------------
def _geo(rng, kind):
    if kind == "altitude":
        a, b = pick(rng, [(6, 8), (5, 12), (9, 12), (8, 15), (7, 24)])
        c = math.hypot(a, b)
        h = a * b / c
        return (f"Right triangle ABC with the right angle at C, AC = {a}, BC = {b}; a dashed altitude from C to AB "
                "is marked h.", "Find the length h of the altitude from C.", f"AB = hypot({a}, {b}); h = {a}*{b}/AB",
                f"h = {fmt(h)} (AB = {fmt(c)})", "the area can be written two ways: AC*BC/2 = AB*h/2")
    if kind == "sector":
        r, ang = pick(rng, [4, 5, 6, 9, 10]), pick(rng, [40, 60, 72, 120, 135])
        area = math.pi * r * r * ang / 360
        arc = 2 * math.pi * r * ang / 360
        return (f"A circle with centre O and radius {r} cm; a shaded sector with central angle {ang}°.",
                "What are the area of the shaded sector and the length of its arc?",
                f"area = pi*{r}**2*{ang}/360; arc = 2*pi*{r}*{ang}/360",
                f"area = {fmt(area)} cm^2, arc = {fmt(arc)} cm", "the angle is in degrees, so use the fraction "
                "angle/360 (or convert to radians)")
    if kind == "inscribed":
        x = pick(rng, [38, 52, 64, 70, 81])
        return (f"Points A, B, C on a circle with centre O; the central angle AOB is marked {2 * x}°, and angle ACB "
                "is marked x.", "Find x.", f"x = {2 * x} / 2", f"x = {x}°",
                "an inscribed angle is half the central angle on the same arc")
    if kind == "trapezoid":
        a, b, h = pick(rng, [8, 10, 12]), pick(rng, [14, 18, 20]), pick(rng, [5, 6, 7])
        return (f"Trapezoid with parallel sides {a} m and {b} m and a height of {h} m (dashed perpendicular).",
                "What is the area of the trapezoid?", f"({a} + {b}) / 2 * {h}", f"{fmt((a + b) / 2 * h)} m^2",
                "use the perpendicular height, not the slanted side")
    if kind == "cylinder":
        d, h = pick(rng, [6, 8, 10, 14]), pick(rng, [10, 12, 20])
        v = math.pi * (d / 2) ** 2 * h
        return (f"A cylinder drawn with a diameter of {d} cm across the top and height {h} cm.",
                "What is its volume in litres?", f"pi * ({d}/2)**2 * {h} / 1000",
                f"{fmt(v)} cm^3 = {fmt(v / 1000, 3)} L", "the label is the diameter, so halve it for the radius")
    if kind == "shadow":
        pole, shadow, bshadow = pick(rng, [1.5, 1.8, 2]), pick(rng, [1.2, 2.4, 3]), pick(rng, [18, 24, 30])
        hgt = pole * bshadow / shadow
        return (f"A person {pole} m tall casts a {shadow} m shadow; at the same time a tree casts a {bshadow} m "
                "shadow. Two similar right triangles are drawn.", "How tall is the tree?",
                f"{pole} * {bshadow} / {shadow}", f"{fmt(hgt)} m", "similar triangles: corresponding sides in "
                "the same ratio")
    n = pick(rng, [5, 6, 8, 9, 10, 12])
    return (f"A regular polygon with {n} sides, one interior angle marked with a question mark.",
            "Find the interior angle.", f"(n - 2) * 180 / n with n = {n}", f"{fmt((n - 2) * 180 / n)}°",
            "interior-angle sum is (n - 2) x 180°")


def fam_geometry(rng):
    good, bad, queries = [], [], []
    kinds = ["altitude", "sector", "inscribed", "trapezoid", "cylinder", "shadow", "polygon", "altitude", "sector",
             "cylinder", "shadow"]
    deck = Deck(rng)
    for kind in kinds:
        cap, ask, code, ans, key = _geo(rng, kind)
        q = deck(kind, [f"{ask} (see the diagram)", f"Using the figure attached: {ask[0].lower()}{ask[1:]}",
                        f"Geometry homework - {ask[0].lower()}{ask[1:]} The diagram has all the measurements.",
                        f"From the labelled drawing: {ask[0].lower()}{ask[1:]}"])
        steps = [st("Read the labelled measurements from the diagram; the drawing may not be to scale.", "ocr",
                    "image_1: all labels and marked values", cap),
                 st(f"Apply the right relation: {key}.", "python", code, ans),
                 st("Check units and plausibility against the picture.", "calculator", "sanity check", "plausible")]
        reas = (f"Measurements came from the labels (OCR), never from measuring the drawing, which is not to scale. "
                f"The governing fact was that {key}; computing in code and checking units (cm vs m, cm^3 vs L, "
                "degrees vs radians) avoided the usual slips.")
        good.append(tr(q, f"solve a geometry problem from a diagram ({kind})", steps, reas, ans, images=1,
                       caption=cap))
    bad.append(tr("Find the volume of the cylinder in the diagram, in cm^3.", "solve a geometry problem from a "
                  "diagram", [st("Read labels.", "ocr", "image_1", "cylinder, 10 cm across the top, height 12 cm"),
                              st("Volume.", "python", "pi * 10**2 * 12", "3769.91")],
                  "Used V = pi r^2 h with the labelled value.", "3769.91 cm^3", images=1,
                  caption="A cylinder with its diameter (10 cm) marked across the top and height 12 cm."))
    queries.append(qy("What is the hypotenuse and the height onto it in this right-angled triangle?",
                      "right triangle calculation from a figure", images=1,
                      caption="Right triangle PQR, right angle at R, legs PR = 20 and QR = 21, altitude from R "
                              "dashed."))
    queries.append(qy("pls help, need the angle x in the circle pic for hw. central angle is 110",
                      "circle angle from a diagram", images=1))
    queries.append(qy("图中梯形的上底6厘米、下底11厘米、高4厘米，面积是多少？", "根据图形求梯形面积", images=1,
                      lang="zh", caption="一个梯形，上底6 cm，下底11 cm，虚线标出的高为4 cm。"))
    queries.append(qy("Work this out from the sketch.", "geometry problem", images=1, caption_only=True,
                      caption="Sketch: a flagpole casts a 15 m shadow while a 1.6 m student casts a 2 m shadow; "
                              "'how tall is the flagpole?' written beside two similar triangles."))
    queries.append(qy("The drawing shows a pizza slice with a 50-degree angle cut from a 16 cm radius pizza. How "
                      "much area does the slice have?", "sector area from a drawing", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# handwritten equation (photo) -> solve
# ----------------------------------------------------------------------------------------------------------------
def poly(coefs: list[int], var: str = "x") -> str:
    """[2, -3, 1] -> '2x^2 - 3x + 1'."""
    deg = len(coefs) - 1
    out = []
    for k, c in enumerate(coefs):
        p = deg - k
        if c == 0:
            continue
        mag = abs(c)
        term = ("" if mag == 1 and p else str(mag)) + (var if p else "") + (f"^{p}" if p > 1 else "")
        out.append(("- " if c < 0 else "+ ") + term)
    s = " ".join(out)
    return s[2:] if s.startswith("+ ") else "-" + s[2:]


def fam_handwritten(rng):
    from fractions import Fraction as F
    good, bad, queries = [], [], []
    kinds = ["quadratic", "system", "integral", "derivative", "quadratic", "system", "integral", "derivative",
             "quadratic", "system"]
    deck = Deck(rng)
    for kind in kinds:
        if kind == "quadratic":
            r1, r2 = pick(rng, [-5, -4, -3, -2, -1, 1, 2, 3, 4, 6, 7], 2)
            a = pick(rng, [1, 2, 3])
            co = [a, -a * (r1 + r2), a * r1 * r2]
            eq = f"{poly(co)} = 0"
            garbled = eq.replace("^2", "2", 1)
            code = f"solve({poly(co).replace('^', '**')}, x)"
            ans = f"x = {min(r1, r2)} or x = {max(r1, r2)}"
            ask = deck(kind, ["Solve the equation in this photo of my notes.", "What are the solutions of the "
                              "quadratic I wrote on the board?", "Find x in the handwritten equation."])
            sub = "solve a handwritten quadratic equation"
            check = f"substituting {r1} and {r2} gives 0 and 0"
        elif kind == "system":
            x, y = rng.randint(-4, 6), rng.randint(-3, 7)
            a1, b1, a2, b2 = rng.randint(1, 5), rng.randint(-4, 4) or 1, rng.randint(1, 4), rng.randint(-5, 5) or -2
            if a1 * b2 - a2 * b1 == 0:
                b2 += 1
            e1 = f"{poly([a1, 0])} {'+' if b1 > 0 else '-'} {abs(b1) if abs(b1) != 1 else ''}y = {a1 * x + b1 * y}"
            e2 = f"{poly([a2, 0])} {'+' if b2 > 0 else '-'} {abs(b2) if abs(b2) != 1 else ''}y = {a2 * x + b2 * y}"
            eq = f"{e1}; {e2}"
            garbled = eq.replace("y", "v", 1)
            code = (f"linsolve([Eq({a1}*x + ({b1})*y, {a1 * x + b1 * y}), Eq({a2}*x + ({b2})*y, "
                    f"{a2 * x + b2 * y})], x, y)")
            ans = f"x = {x}, y = {y}"
            ask = deck(kind, ["Can you solve the system of equations I wrote down?", "Find x and y from the two "
                              "equations in my photo.", "Solve the simultaneous equations on this page."])
            sub = "solve a handwritten linear system"
            check = "both equations hold for the solution"
        elif kind == "integral":
            p, q, r = rng.randint(1, 6), rng.randint(-5, 5), rng.randint(-4, 8)
            lo, hi = pick(rng, [(0, 1), (0, 2), (1, 3), (-1, 2), (0, 3)])
            val = F(p, 3) * (hi ** 3 - lo ** 3) + F(q, 2) * (hi ** 2 - lo ** 2) + r * (hi - lo)
            eq = f"∫ from {lo} to {hi} of ({poly([p, q, r])}) dx"
            garbled = eq.replace("^2", "2", 1)
            code = f"integrate({poly([p, q, r]).replace('^', '**')}, (x, {lo}, {hi}))"
            ans = f"{val}" + (f" ≈ {fmt(float(val), 4)}" if val.denominator != 1 else "")
            ask = deck(kind, ["What's the value of the integral on this whiteboard photo?", "Evaluate the "
                              "definite integral in my handwritten notes.", "Compute the integral shown in the "
                              "picture."])
            sub = "evaluate a handwritten integral"
            check = "numerical quad() agrees to 1e-9"
        else:
            c3, c2, c1 = rng.randint(1, 3), rng.randint(-6, 6), rng.randint(-9, 9)
            k = rng.randint(-2, 4)
            val = 3 * c3 * k * k + 2 * c2 * k + c1
            eq = f"f(x) = {poly([c3, c2, c1, 0])}; find f'({k})"
            garbled = eq.replace("^3", "3", 1)
            code = f"diff({poly([c3, c2, c1, 0]).replace('^', '**')}, x).subs(x, {k})"
            ans = f"f'({k}) = {val}"
            ask = deck(kind, ["Please evaluate the derivative asked for in the picture.", "What is the derivative "
                              "value requested in my notes?", "Differentiate the function on the page and evaluate "
                              "it where indicated."])
            sub = "evaluate a handwritten derivative"
            check = "finite difference (f(k+h)-f(k-h))/2h with h=1e-5 matches"
        steps = [st("Transcribe the handwriting.", "ocr", "image_1 (handwriting mode)", f"raw: '{garbled}'"),
                 st("The transcript looks off (superscripts and similar-looking letters are often lost); re-read a "
                    "zoomed crop of the suspicious part.", "image_crop", "image_1: zoom on the exponent / variable",
                    f"Confirmed: '{eq}'"),
                 st("Solve symbolically.", "python", code, ans),
                 st("Verify independently.", "python", "check by substitution / numerics", check)]
        reas = ("Handwriting OCR tends to drop superscripts (x² -> x2) and confuse y/v, 5/s or - and ~, so the raw "
                "transcript was checked against a zoomed crop before solving. The problem was then solved with a "
                "CAS (sympy) and verified independently instead of trusting one computation.")
        good.append(tr(ask, sub, steps, reas, ans, images=1, caption=f"Handwritten on paper: {eq}"))
    bad.append(tr("Solve what's written in the photo.", "solve a handwritten quadratic equation",
                  [st("Transcribe.", "ocr", "image_1", "raw: 'x2 - 5x + 6 = 0'"),
                   st("Solve as written.", "python", "solve(x*2 - 5*x + 6, x)", "[2]")],
                  "Solved the transcribed equation.", "x = 2", images=1,
                  caption="Handwritten: x^2 - 5x + 6 = 0"))
    queries.append(qy("Can you find the roots of the equation on my whiteboard?", "roots of a handwritten "
                      "quadratic", images=1, caption="Whiteboard photo with '3x^2 + 3x - 18 = 0' in blue marker."))
    queries.append(qy("my kid's homework pic - 2 equations 2 unknowns, what are x and y?", "solve a simultaneous "
                      "system from a photo", images=1))
    queries.append(qy("照片里手写的定积分等于多少？", "计算手写的定积分", images=1, lang="zh",
                      caption="纸上手写：∫ 从1到2 (4x^3 - x) dx"))
    queries.append(qy("Answer this.", "handwritten calculus", images=1, caption_only=True,
                      caption="A notebook page with g(t) = t^4 - 2t^2 + 7t handwritten and \"g'(2) = ?\" "
                              "underlined."))
    queries.append(qy("I scribbled an equation on a napkin, can you solve it? The photo's blurry around the "
                      "exponent.", "solve an equation from a blurry handwritten photo", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# logic puzzles (solutions found by brute force at generation time, uniqueness checked)
# ----------------------------------------------------------------------------------------------------------------
NAMES5 = ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Max", "Nia", "Otto"]


def _seating(rng, names):
    truth = list(names)
    rng.shuffle(truth)
    pos = {n: i for i, n in enumerate(truth)}
    pool = []
    for a, b in permutations(names, 2):
        if pos[a] + 1 == pos[b]:
            pool.append((f"{a} sits immediately to the left of {b}", lambda p, a=a, b=b: p[a] + 1 == p[b]))
        if abs(pos[a] - pos[b]) > 1 and a < b:
            pool.append((f"{a} does not sit next to {b}", lambda p, a=a, b=b: abs(p[a] - p[b]) > 1))
        if pos[a] < pos[b] and rng.random() < 0.3:
            pool.append((f"{a} sits somewhere to the left of {b}", lambda p, a=a, b=b: p[a] < p[b]))
    for n in names:
        if pos[n] in (0, len(names) - 1):
            pool.append((f"{n} sits at one end", lambda p, n=n: p[n] in (0, len(names) - 1)))
        else:
            pool.append((f"{n} does not sit at either end", lambda p, n=n: p[n] not in (0, len(names) - 1)))
    rng.shuffle(pool)
    chosen = []
    for clue in pool:
        chosen.append(clue)
        sols = [perm for perm in permutations(names)
                if all(f({x: i for i, x in enumerate(perm)}) for _, f in chosen)]
        if len(sols) == 1:
            break
    # drop clues that are not needed
    for clue in list(chosen):
        rest = [c for c in chosen if c is not clue]
        sols = [perm for perm in permutations(names) if all(f({x: i for i, x in enumerate(perm)}) for _, f in rest)]
        if len(sols) == 1:
            chosen = rest
    assert len([perm for perm in permutations(names)
                if all(f({x: i for i, x in enumerate(perm)}) for _, f in chosen)]) == 1
    return [c for c, _ in chosen], truth


def _knights(rng, names):
    while True:
        stmts = []
        for sp in names:
            o = [n for n in names if n != sp]
            kind = rng.randint(0, 3)
            if kind == 0:
                t = pick(rng, o)
                stmts.append((sp, f"{t} is a knave", lambda w, t=t: not w[t]))
            elif kind == 1:
                t, u = o
                stmts.append((sp, f"{t} and {u} are both knights", lambda w, t=t, u=u: w[t] and w[u]))
            elif kind == 2:
                stmts.append((sp, "exactly one of us is a knight", lambda w: sum(w.values()) == 1))
            else:
                t = pick(rng, o)
                stmts.append((sp, f"{t} and I are the same kind", lambda w, t=t, sp=sp: w[t] == w[sp]))
        sols = []
        for vals in product([True, False], repeat=len(names)):
            w = dict(zip(names, vals, strict=True))
            if all(f(w) == w[sp] for sp, _, f in stmts):
                sols.append(w)
        if len(sols) == 1:
            return [f"{sp} says: '{s}'" for sp, s, _ in stmts], sols[0]


def fam_logic(rng):
    good, bad, queries = [], [], []
    for i in range(10):
        if i % 2 == 0:
            names = pick(rng, NAMES5, 5 if i % 4 == 0 else 4)
            clues, truth = _seating(rng, names)
            ask = pick(rng, ["Who sits in the middle?" if len(names) % 2 else "Who sits second from the left?",
                             "What is the seating order from left to right?"])
            q = (f"{len(names)} friends - {', '.join(names)} - sit in a row. " + ". ".join(clues) + f". {ask}")
            if ask.startswith("What"):
                ans = " - ".join(truth)
            elif len(names) % 2:
                ans = truth[len(names) // 2]
            else:
                ans = truth[1]
            steps = [st("Encode each clue as a predicate over positions.", "python",
                        f"clues = [...{len(clues)} lambdas...]; names = {names}", f"{len(clues)} constraints"),
                     st("Brute-force all permutations and keep those satisfying every clue.", "python",
                        "[p for p in permutations(names) if all(c(p) for c in clues)]",
                        f"1 solution: {truth}"),
                     st("Uniqueness confirmed, read off the answer.", "python", "sols[0]", ans)]
            sub = "solve a seating-arrangement logic puzzle"
            reas = ("Rather than reasoning clue by clue (easy to drop a case), every clue was encoded as a predicate "
                    f"and all {math.factorial(len(names))} orders were enumerated. Exactly one order survived, which "
                    "both answers the question and confirms the puzzle is well-posed; 'left of' was read as "
                    "'somewhere left', 'immediately left' as adjacent.")
        else:
            names = pick(rng, NAMES5, 3)
            stmts, sol = _knights(rng, names)
            q = (f"On an island, knights always tell the truth and knaves always lie. {', '.join(names[:-1])} and "
                 f"{names[-1]} are islanders. " + " ".join(s + "." for s in stmts) + " Who is a knight and who is "
                 "a knave?")
            ans = ", ".join(f"{n}: {'knight' if sol[n] else 'knave'}" for n in names)
            steps = [st("Model: each statement is true iff its speaker is a knight.", "python",
                        "for w in product([True, False], repeat=3): check statement(w) == w[speaker]",
                        "8 assignments checked"),
                     st("Keep consistent assignments.", "python", "solutions", f"1 consistent assignment: {ans}")]
            sub = "solve a knights-and-knaves puzzle"
            reas = ("Encoded 'speaker is a knight <=> statement is true' for every speaker and enumerated all 8 "
                    "assignments. Exactly one was consistent; enumerating avoids the classic slip of assuming one "
                    "speaker's type and forgetting to test the alternative.")
        with_img = i % 5 == 4
        photo_q = ("Solve the seating puzzle in the screenshot." if i % 2 == 0 else
                   "Who is a knight and who is a knave in the puzzle shown in the picture?")
        good.append(tr(photo_q if with_img else q, sub,
                       ([st("Read the puzzle text.", "ocr", "image_1", q)] if with_img else []) + steps, reas, ans,
                       images=1 if with_img else 0, caption=f"Screenshot of a puzzle: {q}" if with_img else None))
    bad.append(tr("Ada, Ben and Cleo sit in a row. Ben is not at an end. Ada sits somewhere left of Cleo. Who is on "
                  "the far left?", "solve a seating-arrangement logic puzzle",
                  [st("Ben is in the middle.", "python", "order = ['Ada', 'Ben', 'Cleo']", "['Ada', 'Ben', 'Cleo']"),
                   st("Answer.", "python", "order[0]", "Ada")],
                  "Placed Ben in the middle and Ada left of Cleo.", "Ada"))
    queries.append(qy("Four runners - Pia, Quinn, Rafa, Sol - finished a race. Quinn beat Sol, Pia was not first or "
                      "last, Rafa finished right after Pia, and Sol was not last. What was the finishing order?",
                      "order-deduction puzzle"))
    queries.append(qy("knights always tell truth, knaves lie. Mo says 'we are both knaves'. what are Mo and Lu?",
                      "knights and knaves riddle"))
    queries.append(qy("甲、乙、丙、丁四人排成一排。甲不在两端，乙紧挨在丙的左边，丁在甲的右边某处。从左到右的顺序是什么？",
                      "排列逻辑推理题", lang="zh"))
    queries.append(qy("Can you solve this?", "logic puzzle", images=1, caption_only=True,
                      caption="A puzzle-book page: 'Three boxes are labelled Apples, Oranges and Mixed, and every "
                              "label is wrong. You may take one fruit from one box. Which box do you pick from?'"))
    queries.append(qy("Five people sit around a table... actually in a straight line: Tom is at the left end, "
                      "Uma sits right next to Tom, Vic isn't beside Uma, Wes sits to the right of Vic. Where does "
                      "Xia sit?", "seating deduction"))
    return good, bad, queries
