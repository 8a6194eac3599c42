#!/usr/bin/env bash
# The first command of the README: set up (if needed), count the words of the bundled sample books with the
# jetspark command line, then draw the word-count DAG and write its Spark plan.
#   out/word_count.svg       the DAG as Jet draws it (graphviz)
#   out/word_count.plan.txt  the Spark plan: stages, vertices and their parallelism, each edge's Spark operation
#   out/word_count.plan.svg  the same plan as a picture
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
JETSPARK=.venv/bin/jetspark
MASTER=${MASTER:-local[2]}

echo "== word count on the bundled sample (examples/data/books) =="
"$JETSPARK" run examples/word_count.py --master "$MASTER" --top 15

"$JETSPARK" render examples/word_count.py -o out/word_count.svg
"$JETSPARK" explain examples/word_count.py --master "$MASTER" > out/word_count.plan.txt
"$JETSPARK" render examples/word_count.py --plan --master "$MASTER" -o out/word_count.plan.svg
echo
echo "== the Spark plan (out/word_count.plan.txt) =="
cat out/word_count.plan.txt
echo
echo "DAG picture: out/word_count.svg   plan picture: out/word_count.plan.svg"
