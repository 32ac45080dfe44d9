#!/usr/bin/env python3
"""Checks that every relative link in PERF.md, README.md and perf/**/*.md
resolves to a file or folder of the repository, and that every #anchor of a
link into a Markdown file names one of its headings or <a id> anchors.
Run from the repository root: python3 perf/checklinks.py; exits 1 on a
broken link, listing each."""
import glob, os, re, sys

def anchors(path):
    out, seen = set(), {}
    text = open(path, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    for line in text.splitlines():
        m = re.match(r'#+\s+(.*)', line)
        if m:
            h = m.group(1).strip().lower()
            h = re.sub(r'[^\w\- ]', '', h).replace(' ', '-')
            n = seen.get(h, 0)
            seen[h] = n + 1
            out.add(h if n == 0 else f'{h}-{n}')
    out.update(re.findall(r'<a id="([^"]+)"', text))
    return out

files = ['PERF.md', 'README.md'] + glob.glob('perf/**/*.md', recursive=True)
bad = 0
for f in files:
    text = open(f, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    for m in re.finditer(r'\]\(([^)\s]+)\)', text):
        link = m.group(1)
        if re.match(r'[a-z]+:', link):
            continue
        path, _, frag = link.partition('#')
        target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(target):
            print(f'{f}: {link}: no such file or folder'); bad += 1
        elif frag and target.endswith('.md') and frag not in anchors(target):
            print(f'{f}: {link}: no anchor #{frag}'); bad += 1
print(f'{len(files)} files checked, {bad} broken links')
sys.exit(1 if bad else 0)
