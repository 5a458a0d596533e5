#!/usr/bin/env python3
"""Writes the starting corpus of the libxml2 xml harness into DIR.

The harness reads a 4-byte parser-options word, then pairs of strings
(entity URL, entity content) each ended by a backslash-newline; the first
pair is the main document. These seeds are small documents written for this
benchmark, covering the usual constructs, with options 0 and a few common
flags.
"""
import os, struct, sys

DOCS = [
    b'<?xml version="1.0"?>\n<a x="1"><b>text</b><c/></a>\n',
    b'<!DOCTYPE r [<!ENTITY e "ent"><!ELEMENT r (#PCDATA)>]>\n<r>&e;</r>\n',
    b'<?xml version="1.0" encoding="ISO-8859-1"?><doc><![CDATA[x<y]]><!-- c --><?pi d?></doc>',
    b'<n:root xmlns:n="urn:x" xmlns="urn:d"><n:k a="&amp;&#65;&#x42;"/></n:root>',
    b'<!DOCTYPE d SYSTEM "ext.dtd"><d>&ext;</d>',
    b'<x xml:lang="en" xml:space="preserve">  <y   z = \'q\' /> </x>',
    b'<?xml version="1.0" standalone="yes"?><!DOCTYPE t [<!ATTLIST t a CDATA "d">]><t/>',
]
OPTS = [0, 2 | 4, 1 << 1, 1 << 10, 4]  # plain, NOENT|DTDLOAD, NOENT, XINCLUDE-ish, DTDLOAD


def esc(b):
    return b.replace(b'\\', b'\\\\') + b'\\\n'


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for i, doc in enumerate(DOCS):
        for opt in OPTS[: 2 if i else len(OPTS)]:
            data = struct.pack('<i', opt) + esc(b'doc.xml') + esc(doc)
            if b'ext.dtd' in doc:
                data += esc(b'ext.dtd') + esc(b'<!ENTITY ext "from dtd"><!ELEMENT d ANY>')
            with open(os.path.join(out, 'seed%02d' % n), 'wb') as f:
                f.write(data)
            n += 1


main()
