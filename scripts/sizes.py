#!/usr/bin/env python3
"""Function lengths and struct field counts in Rust sources.

A function's length is counted in lines from its `fn` line to its closing
brace; a struct's size is its number of named fields. Strings, character
literals and comments are stripped first so braces inside them do not
count. Prints the largest of each and how many functions exceed the limit
(80 lines, the rule of issue 10 for src/run/).

Usage: scripts/sizes.py [--limit N] [--top N] PATH...
PATH may be a .rs file or a directory (searched recursively for .rs files).
Exits 0; it reports, it does not judge.
"""
import argparse
import os
import re
import sys


def strip(line, state):
    """Line without strings, chars and comments; state['block'] tracks /* */."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        if state['block']:
            j = line.find('*/', i)
            if j < 0:
                return ''.join(out)
            state['block'] = False
            i = j + 2
            continue
        c = line[i]
        if line.startswith('//', i):
            break
        if line.startswith('/*', i):
            state['block'] = True
            i += 2
            continue
        if c == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == '\\' else 1
            i = j + 1
            continue
        if c == "'" and i + 2 < n and (line[i + 2] == "'" or line[i + 1] == '\\'):
            j = line.find("'", i + 2)
            i = (j + 1) if j > 0 else n
            continue
        out.append(c)
        i += 1
    return ''.join(out)


def rust_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith('.rs'):
                        yield os.path.join(root, f)
        else:
            yield p


def measure(path, fns, structs):
    with open(path) as f:
        lines = f.read().split('\n')
    state = {'block': False}
    clean = [strip(l, state) for l in lines]
    for i, l in enumerate(clean):
        m = re.search(r'\bfn\s+(\w+)', l)
        s = re.match(r'\s*(pub(\([^)]*\))?\s+)?struct\s+(\w+)[^;]*$', l)
        if m:
            depth = 0
            started = False
            for j in range(i, len(clean)):
                if not started and ';' in clean[j] and '{' not in clean[j]:
                    break  # trait method declaration, no body
                depth += clean[j].count('{') - clean[j].count('}')
                if '{' in clean[j]:
                    started = True
                if started and depth <= 0:
                    fns.append((j - i + 1, path, i + 1, m.group(1)))
                    break
        if s and '{' in l:
            depth = 0
            count = 0
            for j in range(i, len(clean)):
                if j > i and depth == 1 and re.match(
                        r'\s*(pub(\([^)]*\))?\s+)?\w+\s*:', clean[j]):
                    count += 1
                depth += clean[j].count('{') - clean[j].count('}')
                if depth <= 0 and '}' in clean[j]:
                    break
            structs.append((count, path, i + 1, s.group(3)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--limit', type=int, default=80, help='function length limit (80)')
    ap.add_argument('--top', type=int, default=8, help='how many of each to list (8)')
    ap.add_argument('paths', nargs='+', help='.rs files or directories')
    args = ap.parse_args()
    fns, structs = [], []
    for path in rust_files(args.paths):
        measure(path, fns, structs)
    fns.sort(reverse=True)
    structs.sort(reverse=True)
    print("largest functions (lines):")
    for f in fns[:args.top]:
        print("  %4d  %s:%d  %s" % f)
    print("functions over %d lines:" % args.limit,
          sum(1 for f in fns if f[0] > args.limit), "of", len(fns))
    print("largest structs (fields):")
    for s in structs[:args.top]:
        print("  %4d  %s:%d  %s" % s)


if __name__ == '__main__':
    sys.exit(main())
