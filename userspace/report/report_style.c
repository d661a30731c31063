// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pages' one style sheet, inline in each page: the report's
 * (report_html.c) and diff's (export/exp_diff_html.c) look alike.
 */
#include "report.h"

const char rp_html_css[] =
	"body{margin:0;background:#fafafa;color:#222;"
	"font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}"
	"main{max-width:1320px;margin:0 auto;padding:18px 24px 40px}"
	"h1{font-size:24px;margin:4px 0 2px}h2{font-size:18px;margin:28px 0 6px;"
	"border-bottom:1px solid #ddd;padding-bottom:3px}"
	".sub{color:#555;margin:0 0 12px}.note{color:#555;margin:4px 0 8px}"
	".cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}"
	".card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:200px}"
	".card b{display:block;font-size:22px}.card span{color:#555;font-size:13px}"
	".warn{background:#fff4e5;border:1px solid #f0b46a;border-radius:6px;padding:8px 12px;margin:10px 0}"
	".ok{background:#eef7ee;border:1px solid #9c9;border-radius:6px;padding:8px 12px;margin:10px 0}"
	"svg.chart{display:block;max-width:100%;height:auto;background:#fff}"
	"svg text{font-family:inherit;fill:#222}svg .tk{font-size:11px;fill:#444}"
	"svg .ttl{font-size:13px;font-weight:600}svg .lg{font-size:13px}"
	"svg .pk{font-size:11.5px;font-weight:600;fill:#c0392b;paint-order:stroke;stroke:#fff;stroke-width:3px}"
	".grid{display:grid;gap:10px}"
	".grid svg{border:1px solid #e4e4e4;border-radius:4px}"
	".box{background:#fff;border:1px solid #e4e4e4;border-radius:4px;padding:6px}"
	"table{border-collapse:collapse;background:#fff;margin:6px 0;font-variant-numeric:tabular-nums}"
	"th,td{border:1px solid #e0e0e0;padding:4px 9px;text-align:right;white-space:nowrap}"
	"th{background:#f2f2f2;font-weight:600}td.l,th.l{text-align:left}"
	".sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:-1px}"
	".bar{display:inline-block;height:10px;background:#f28e2b;vertical-align:middle;margin-left:6px}"
	".gbar{display:inline-block;height:10px;background:#4e79a7;vertical-align:middle;margin-left:6px}";
