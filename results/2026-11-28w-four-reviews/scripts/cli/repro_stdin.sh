. /work/hunt-cli/tiny.sh
T="python -m minitx.translate translate --run $H/t1 --beam-size 2"
show() { echo "=== $1"; }
show "empty input"; printf '' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat e1
show "only newline"; printf '\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat -A o1 | cut -c1-80; cat e1
show "blank lines between"; printf 'Ein Hund.\n\n   \nZwei Katzen.\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cut -c1-40 o1 | cat -A; cat e1
show "no trailing newline"; printf 'Ein Hund.\nZwei' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat e1
show "CRLF"; printf 'Ein Hund.\r\nZwei.\r\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat -A o1 | cut -c1-40; cat e1
show "emoji/unknown"; printf 'Ein Hund 🐶 läuft → 北京 \x01 ok\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cut -c1-60 o1; cat e1
show "invalid utf8"; printf 'Ein \xff Hund\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat e1
show "BOM"; printf '\xef\xbb\xbfEin Hund.\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat e1
show "very long line (3000 words)"; python -c "print(' '.join(['Hund']*3000))" | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1) chars=$(wc -c < o1)"; cat e1
show "many lines (300)"; zcat /work/shared/data/multi30k/val.de.gz | head -300 | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat e1
show "uppercase"; printf 'EIN HUND LÄUFT.\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cut -c1-40 o1; cat e1
show "trailing spaces vs none"; printf 'Ein Hund.   \nEin Hund.\n' | $T > o1 2> e1; echo "rc=$?"; cut -c1-60 o1; cat e1
show "NUL byte"; printf 'Ein\x00Hund.\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat e1
show "form feed / vertical tab / U+2028"; printf 'Ein\x0cHund.\nZwei\x0bKatzen.\nDrei\xe2\x80\xa8Mäuse.\n' | $T > o1 2> e1; echo "rc=$? lines_out=$(wc -l < o1)"; cat e1
show "directory as input"; $T --input $H < /dev/null > o1 2> e1; echo "rc=$?"; cat e1
