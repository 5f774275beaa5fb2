package dev.exactly.benchmarks;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table with aligned columns: the first column left-aligned, the others right-aligned
 * (they hold figures). Also renders as a Markdown table for the README.
 */
public final class TextTable {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    public TextTable(String... header) {
        this.header = List.of(header);
    }

    /** Adds a row; it must have as many cells as the header. */
    public TextTable row(String... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("a row has " + header.size() + " cells, not " + cells.length);
        }
        rows.add(List.of(cells));
        return this;
    }

    public void print(PrintStream out) {
        int[] widths = new int[header.size()];
        for (List<String> row : allRows()) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : allRows()) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                String cell = row.get(i);
                String pad = " ".repeat(widths[i] - cell.length());
                line.append(i == 0 ? cell + pad : "  " + pad + cell);
            }
            out.println(line.toString().stripTrailing());
        }
    }

    /** The same table in Markdown. */
    public String markdown() {
        StringBuilder text = new StringBuilder();
        text.append("| ").append(String.join(" | ", header)).append(" |\n");
        text.append("|---").append("|---:".repeat(header.size() - 1)).append("|\n");
        for (List<String> row : rows) {
            text.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        return text.toString();
    }

    private List<List<String>> allRows() {
        List<List<String>> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        return all;
    }

    /** A rate with thousands separators and no decimals: {@code 12,345}. */
    public static String rate(double perSecond) {
        return String.format("%,.0f", perSecond);
    }

    /** A ratio with two decimals: {@code 0.47}. */
    public static String ratio(double ratio) {
        return Double.isFinite(ratio) ? String.format("%.2f", ratio) : "-";
    }

    /** Milliseconds with two decimals. */
    public static String millis(double millis) {
        return String.format("%.2f", millis);
    }
}
