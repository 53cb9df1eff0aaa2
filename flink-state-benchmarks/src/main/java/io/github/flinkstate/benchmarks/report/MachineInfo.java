package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Where figures were measured. Immutable.
 *
 * @param cores available processors
 * @param java Java version
 * @param os OS name and version
 * @param arch CPU architecture
 */
public record MachineInfo(int cores, String java, String os, String arch) {

    /** The machine this JVM runs on. */
    public static MachineInfo current() {
        return new MachineInfo(
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                System.getProperty("os.name") + " " + System.getProperty("os.version"),
                System.getProperty("os.arch"));
    }

    /** Writes {@code cores}, {@code java}, {@code os} and {@code arch} into {@code node}. */
    public void writeTo(ObjectNode node) {
        node.put("cores", cores);
        node.put("java", java);
        node.put("os", os);
        node.put("arch", arch);
    }

    /** {@link #writeTo} as a one-line JSON object, for the scenarios' hand-written files. */
    public String toJson() {
        ObjectNode node = new ObjectMapper().createObjectNode();
        writeTo(node);
        return node.toString();
    }

    /** This machine, but with the Java version a result file recorded (if known). */
    public MachineInfo withJava(String recordedJava) {
        return recordedJava == null || recordedJava.isEmpty()
                ? this
                : new MachineInfo(cores, recordedJava, os, arch);
    }
}
