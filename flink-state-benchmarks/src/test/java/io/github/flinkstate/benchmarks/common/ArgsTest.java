package io.github.flinkstate.benchmarks.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The one argument parser: defaults, values, and every kind of bad argument with its usage line.
 */
class ArgsTest {

    private static Args args() {
        return Args.of("Prog").flag("records", "100", "records").flag("name", "x", "a name");
    }

    @Test
    void defaultsAndGivenValues() {
        Args a = args().parse(new String[] {"--records", "2_000"});
        assertThat(a.getLong("records")).isEqualTo(2000);
        assertThat(a.isSet("records")).isTrue();
        assertThat(a.get("name")).isEqualTo("x");
        assertThat(a.isSet("name")).isFalse();
        assertThat(args().usage()).isEqualTo("Usage: Prog [--records 100] [--name x]");
        assertThat(args().help()).contains("--records").contains("(default 100)");
    }

    @Test
    void unknownFlag_failsWithUsage() {
        assertThatThrownBy(() -> args().parse(new String[] {"--record", "1"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown flag '--record'")
                .hasMessageContaining("Usage: Prog");
    }

    @Test
    void danglingFlag_failsWithUsage() {
        assertThatThrownBy(() -> args().parse(new String[] {"--records"}))
                .hasMessageContaining("'--records' has no value")
                .hasMessageContaining("Usage: Prog");
        assertThatThrownBy(() -> args().parse(new String[] {"--records", "--name", "y"}))
                .hasMessageContaining("'--records' has no value");
    }

    @Test
    void positionalRepeatedAndMalformed_fail() {
        assertThatThrownBy(() -> args().parse(new String[] {"5"}))
                .hasMessageContaining("unexpected argument '5'");
        assertThatThrownBy(() -> args().parse(new String[] {"--name", "a", "--name", "b"}))
                .hasMessageContaining("given twice");
        Args a = args().parse(new String[] {"--records", "many"});
        assertThatThrownBy(() -> a.getLong("records"))
                .hasMessageContaining("--records expects an integer, got 'many'")
                .hasMessageContaining("Usage: Prog");
    }
}
