#!/usr/bin/env python3
"""Connect Four tuning sets in Pons' format, so that search settings are chosen on positions
that are not Pons' test sets (data/connect4-tune/; the test sets stay for measurement).

Random games from a fixed seed; a position of 4-27 moves is kept when it is not over, the
side to move has no immediate win and it is not one of Pons' test positions. Positions of
10 moves or more are scored by `tabula solve connect4` (the solver is the yardstick, as for
Pons' sets), then split like Pons' harder sets: Tune_middle (15-27 moves, |score| <= 4) and
Tune_beginning (10-14 moves, |score| <= 6), 600 positions each in a shuffled order.

    scripts/connect4-tuning-set.py [TABULA_BINARY] [PONS_DIR] [OUT_DIR]
"""
import glob
import random
import subprocess
import sys

W, H = 7, 6
TABULA = sys.argv[1] if len(sys.argv) > 1 else "target/release/tabula"
PONS = sys.argv[2] if len(sys.argv) > 2 else "../shared/data/connect4"
OUT = sys.argv[3] if len(sys.argv) > 3 else "data/connect4-tune"


def wins(b, c, r):
    p = b[c][r]
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        n = 1
        for s in (1, -1):
            x, y = c + s * dc, r + s * dr
            while 0 <= x < W and 0 <= y < H and b[x][y] == p:
                n += 1
                x += s * dc
                y += s * dr
        if n >= 4:
            return True
    return False


def over(moves):
    """Whether the game of `moves` has ended (or a move does not fit)."""
    b = [[0] * H for _ in range(W)]
    hts = [0] * W
    for i, ch in enumerate(moves):
        c = int(ch) - 1
        if hts[c] >= H:
            return True
        b[c][hts[c]] = 1 + i % 2
        hts[c] += 1
        if wins(b, c, hts[c] - 1):
            return True
    return False


def candidates(seed, count, pons):
    rng = random.Random(seed)
    out = set()
    while len(out) < count:
        moves = ""
        ok = True
        for _ in range(rng.randint(4, 27)):
            legal = [c for c in range(1, 8) if moves.count(str(c)) < H]
            moves += str(rng.choice(legal))
            if over(moves):
                ok = False
                break
        if not ok or moves in pons:
            continue
        if any(moves.count(str(c)) < H and over(moves + str(c)) for c in range(1, 8)):
            continue
        out.add(moves)
    return sorted(out)


def main():
    pons = set()
    for f in glob.glob(PONS + "/Test_*"):
        pons.update(line.split()[0] for line in open(f))
    if not pons:
        sys.exit(f"no Pons test sets in {PONS}")
    todo = [m for m in candidates(20261207, 6000, pons) if len(m) >= 10]
    solved = subprocess.run([TABULA, "solve", "connect4"], input="\n".join(todo) + "\n",
                            capture_output=True, text=True, check=True, timeout=3600)
    rows = [line.split() for line in solved.stdout.splitlines()]
    assert [r[0] for r in rows] == todo, "the solver answered other positions"
    rng = random.Random(7)
    middle = [r for r in rows if len(r[0]) >= 15 and abs(int(r[1])) <= 4]
    beginning = [r for r in rows if 10 <= len(r[0]) <= 14 and abs(int(r[1])) <= 6]
    rng.shuffle(middle)
    rng.shuffle(beginning)
    for name, part in (("Tune_middle", middle), ("Tune_beginning", beginning)):
        with open(f"{OUT}/{name}", "w") as f:
            f.writelines(f"{m} {s}\n" for m, s in part[:600])


if __name__ == "__main__":
    main()
