package io.github.flinkstate.benchmarks.common;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one command-line parser of the demo and every scenario: {@code --name value} pairs of
 * declared flags, each with a default and a description. An unknown flag, a flag without its value,
 * a repeated flag or a value that does not parse is an {@link IllegalArgumentException} whose
 * message ends with the usage line; {@link #parseOrExit} prints it and exits with status 2 ({@code
 * --help} prints the usage and exits with 0).
 *
 * <pre>{@code
 * Args args = Args.of("DemoJob")
 *         .flag("records", "2000000", "records per run")
 *         .flag("parallelism", "2", "slots and job parallelism")
 *         .parseOrExit(argv);
 * long records = args.getLong("records");
 * }</pre>
 *
 * <p>Not thread-safe (declare and parse on one thread); the parsed values are immutable.
 */
public final class Args {

    private final String program;
    private final Map<String, String[]> declared = new LinkedHashMap<>();
    private final Map<String, String> values = new LinkedHashMap<>();

    private Args(String program) {
        this.program = program;
    }

    /** A parser for {@code program} (the name shown in the usage line). */
    public static Args of(String program) {
        return new Args(program);
    }

    /** Declares {@code --name} with its default value and a short description. */
    public Args flag(String name, String defaultValue, String description) {
        declared.put(name, new String[] {defaultValue, description});
        return this;
    }

    /** One line: {@code Usage: Program [--a <default>] [--b <default>]}. */
    public String usage() {
        StringBuilder sb = new StringBuilder("Usage: ").append(program);
        declared.forEach(
                (n, d) -> sb.append(" [--").append(n).append(' ').append(d[0]).append(']'));
        return sb.toString();
    }

    /** The usage line and one line per flag with its description. */
    public String help() {
        StringBuilder sb = new StringBuilder(usage()).append('\n');
        declared.forEach(
                (n, d) -> sb.append(String.format("  --%-22s %s (default %s)%n", n, d[1], d[0])));
        return sb.toString();
    }

    /** Parses {@code argv}; throws {@link IllegalArgumentException} naming the bad argument. */
    public Args parse(String[] argv) {
        values.clear();
        for (int i = 0; i < argv.length; i++) {
            String arg = argv[i];
            if (!arg.startsWith("--")) {
                throw bad("unexpected argument '" + arg + "' (flags are --name value pairs)");
            }
            String name = arg.substring(2);
            if (!declared.containsKey(name)) {
                throw bad("unknown flag '" + arg + "'");
            }
            if (i + 1 >= argv.length || argv[i + 1].startsWith("--")) {
                throw bad("flag '" + arg + "' has no value");
            }
            if (values.put(name, argv[++i]) != null) {
                throw bad("flag '" + arg + "' given twice");
            }
        }
        return this;
    }

    /**
     * Parses {@code argv}; on {@code --help} prints {@link #help()} and exits with 0, on an error
     * prints the message (with the usage line) and exits with 2.
     */
    public Args parseOrExit(String[] argv) {
        if (argv.length == 1 && (argv[0].equals("--help") || argv[0].equals("-h"))) {
            System.out.print(help());
            System.exit(0);
        }
        try {
            return parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            throw e; // not reached
        }
    }

    /** The value of {@code name}: given, or its default. */
    public String get(String name) {
        String[] d = declared.get(name);
        if (d == null) {
            throw new IllegalStateException("flag --" + name + " was not declared");
        }
        return values.getOrDefault(name, d[0]);
    }

    /** Whether {@code name} was given on the command line. */
    public boolean isSet(String name) {
        return values.containsKey(name);
    }

    public long getLong(String name) {
        try {
            return Long.parseLong(get(name).replace("_", ""));
        } catch (NumberFormatException e) {
            throw bad("--" + name + " expects an integer, got '" + get(name) + "'");
        }
    }

    public int getInt(String name) {
        long v = getLong(name);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw bad("--" + name + " is out of range: " + v);
        }
        return (int) v;
    }

    public double getDouble(String name) {
        try {
            return Double.parseDouble(get(name));
        } catch (NumberFormatException e) {
            throw bad("--" + name + " expects a number, got '" + get(name) + "'");
        }
    }

    private IllegalArgumentException bad(String what) {
        return new IllegalArgumentException(program + ": " + what + "\n" + usage());
    }
}
