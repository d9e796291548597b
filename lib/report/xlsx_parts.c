/* SPDX-License-Identifier: MIT */
/*
 * xlsx_parts.c - the workbook's package parts besides its sheets: the
 * workbook and its relationships, which name every sheet (so written
 * last), the styles the sheets' cells refer to, the document properties
 * and the content types.  See xlsx_int.h.
 */
#include "xlsx_int.h"

#include <stdio.h>
#include <time.h>

static const char styles_xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
	"<styleSheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
	"<numFmts count=\"2\"><numFmt numFmtId=\"164\" formatCode=\"0.000\"/>"
	"<numFmt numFmtId=\"165\" formatCode=\"0.0000\"/></numFmts>"
	"<fonts count=\"2\"><font><sz val=\"11\"/><color theme=\"1\"/><name val=\"Calibri\"/><family val=\"2\"/></font>"
	"<font><b/><sz val=\"11\"/><color theme=\"1\"/><name val=\"Calibri\"/><family val=\"2\"/></font></fonts>"
	"<fills count=\"3\"><fill><patternFill patternType=\"none\"/></fill><fill><patternFill patternType=\"gray125\"/></fill>"
	"<fill><patternFill patternType=\"solid\"><fgColor rgb=\"FFD9E1F2\"/><bgColor indexed=\"64\"/></patternFill></fill></fills>"
	"<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>"
	"<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>"
	"<cellXfs count=\"5\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
	"<xf numFmtId=\"0\" fontId=\"1\" fillId=\"2\" borderId=\"0\" xfId=\"0\" applyFont=\"1\" applyFill=\"1\"/>"
	"<xf numFmtId=\"164\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
	"<xf numFmtId=\"2\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
	"<xf numFmtId=\"165\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/></cellXfs>"
	"<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>"
	"<dxfs count=\"2\"><dxf><font><color rgb=\"FF006100\"/></font><fill><patternFill><bgColor rgb=\"FFC6EFCE\"/>"
	"</patternFill></fill></dxf><dxf><font><color rgb=\"FF9C0006\"/></font><fill><patternFill>"
	"<bgColor rgb=\"FFFFC7CE\"/></patternFill></fill></dxf></dxfs>"
	"<tableStyles count=\"0\" defaultTableStyle=\"TableStyleMedium9\" defaultPivotStyle=\"PivotStyleLight16\"/>"
	"</styleSheet>";

#define XML_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
#define REL_NS "http://schemas.openxmlformats.org/package/2006/relationships"
#define DOC_REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define CT_OOX "application/vnd.openxmlformats-officedocument."

/* The parts that name every sheet, and the fixed ones. */
int xlsx_write_parts(ev_xlsx *x)
{
	char when[32], a[20], z[20];
	struct tm tm;
	time_t t = (time_t)x->created;
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof when, "1980-01-01T00:00:00Z");

	xlsx_member(x, "xl/workbook.xml");
	xlsx_str(x, XML_HEAD "<workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
	          "xmlns:r=\"" DOC_REL "\"><workbookPr/><bookViews><workbookView/></bookViews><sheets>");
	for (size_t i = 0; i < x->nsh; i++) {
		xlsx_str(x, "<sheet name=\"");
		xlsx_text(x, x->sh[i].name, 1);
		xlsx_fmt(x, "\" sheetId=\"%zu\" r:id=\"rId%zu\"/>", i + 1, i + 1);
	}
	xlsx_str(x, "</sheets>");
	/* Excel keeps a sheet's filter range as a hidden name. */
	int names = 0;
	for (size_t i = 0; i < x->nsh; i++) {
		if (x->sh[i].nrows == 0)
			continue;
		if (!names++)
			xlsx_str(x, "<definedNames>");
		xlsx_ref(a, 0, 0, 1);
		xlsx_ref(z, x->sh[i].ncols - 1, x->sh[i].nrows, 1);
		xlsx_fmt(x, "<definedName name=\"_xlnm._FilterDatabase\" localSheetId=\"%zu\" hidden=\"1\">'", i);
		/* In a formula an apostrophe of the name is doubled. */
		for (const char *p = x->sh[i].name; *p; p++) {
			const char one[2] = { *p, 0 };
			xlsx_text(x, *p == '\'' ? "''" : one, 0);
		}
		xlsx_fmt(x, "'!%s:%s</definedName>", a, z);
	}
	if (names)
		xlsx_str(x, "</definedNames>");
	xlsx_str(x, "<calcPr calcId=\"124519\" fullCalcOnLoad=\"1\"/></workbook>");

	xlsx_member(x, "xl/_rels/workbook.xml.rels");
	xlsx_str(x, XML_HEAD "<Relationships xmlns=\"" REL_NS "\">");
	for (size_t i = 0; i < x->nsh; i++)
		xlsx_fmt(x, "<Relationship Id=\"rId%zu\" Type=\"" DOC_REL "/worksheet\" Target=\"worksheets/sheet%zu.xml\"/>",
		       i + 1, i + 1);
	xlsx_fmt(x, "<Relationship Id=\"rId%zu\" Type=\"" DOC_REL "/styles\" Target=\"styles.xml\"/></Relationships>",
	       x->nsh + 1);

	xlsx_member(x, "xl/styles.xml");
	xlsx_str(x, styles_xml);

	xlsx_member(x, "docProps/app.xml");
	xlsx_str(x, XML_HEAD "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\">"
	          "<Application>evkit</Application></Properties>");

	xlsx_member(x, "docProps/core.xml");
	xlsx_fmt(x, XML_HEAD "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/"
	          "core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/"
	          "terms/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">");
	xlsx_fmt(x, "<dcterms:created xsi:type=\"dcterms:W3CDTF\">%s</dcterms:created>"
	          "<dcterms:modified xsi:type=\"dcterms:W3CDTF\">%s</dcterms:modified></cp:coreProperties>",
	       when, when);

	xlsx_member(x, "_rels/.rels");
	xlsx_str(x, XML_HEAD "<Relationships xmlns=\"" REL_NS "\">"
	          "<Relationship Id=\"rId1\" Type=\"" DOC_REL "/officeDocument\" Target=\"xl/workbook.xml\"/>"
	          "<Relationship Id=\"rId2\" Type=\"" REL_NS "/metadata/core-properties\" Target=\"docProps/core.xml\"/>"
	          "<Relationship Id=\"rId3\" Type=\"" DOC_REL "/extended-properties\" Target=\"docProps/app.xml\"/>"
	          "</Relationships>");

	xlsx_member(x, "[Content_Types].xml");
	xlsx_str(x, XML_HEAD "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
	          "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
	          "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
	          "<Override PartName=\"/docProps/app.xml\" ContentType=\"" CT_OOX "extended-properties+xml\"/>"
	          "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/vnd.openxmlformats-package."
	          "core-properties+xml\"/>"
	          "<Override PartName=\"/xl/styles.xml\" ContentType=\"" CT_OOX "spreadsheetml.styles+xml\"/>"
	          "<Override PartName=\"/xl/workbook.xml\" ContentType=\"" CT_OOX "spreadsheetml.sheet.main+xml\"/>");
	for (size_t i = 0; i < x->nsh; i++)
		xlsx_fmt(x, "<Override PartName=\"/xl/worksheets/sheet%zu.xml\" ContentType=\"" CT_OOX
		          "spreadsheetml.worksheet+xml\"/>", i + 1);
	xlsx_str(x, "</Types>");
	xlsx_flush(x);
	return x->st;
}

