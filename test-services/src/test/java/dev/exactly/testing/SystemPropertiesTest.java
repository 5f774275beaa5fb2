package dev.exactly.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SystemPropertiesTest {
    private static final String NAME = "exactly.test.setting";

    @AfterEach
    void clear() {
        System.clearProperty(NAME);
    }

    @Test
    void anUnsetPropertyGivesTheFallback() {
        assertThat(SystemProperties.integer(NAME, 7)).isEqualTo(7);
        assertThat(SystemProperties.integer(NAME)).isNull();
        assertThat(SystemProperties.longInteger(NAME, 20261201L)).isEqualTo(20261201L);
        assertThat(SystemProperties.seconds(NAME, Duration.ofSeconds(5))).isEqualTo(Duration.ofSeconds(5));
        assertThat(SystemProperties.flag(NAME)).isFalse();
    }

    @Test
    void aReadableValueIsTaken() {
        System.setProperty(NAME, " 60 ");
        assertThat(SystemProperties.integer(NAME, 5)).isEqualTo(60);
        assertThat(SystemProperties.seconds(NAME, Duration.ofSeconds(5))).isEqualTo(Duration.ofSeconds(60));
        System.setProperty(NAME, "-3");
        assertThat(SystemProperties.integer(NAME)).isEqualTo(-3); // the caller's own checks judge the range
        System.setProperty(NAME, "9007199254740993");
        assertThat(SystemProperties.longInteger(NAME, 0)).isEqualTo(9007199254740993L);
        System.setProperty(NAME, "TRUE");
        assertThat(SystemProperties.flag(NAME)).isTrue();
        System.setProperty(NAME, ""); // -Dname alone
        assertThat(SystemProperties.flag(NAME)).isTrue();
        System.setProperty(NAME, "false");
        assertThat(SystemProperties.flag(NAME)).isFalse();
    }

    @Test
    void aPropertySetForAnActionIsGivenBackWhatItHeld() {
        SystemProperties.with(
                NAME, "3", () -> assertThat(SystemProperties.integer(NAME, 5)).isEqualTo(3));
        assertThat(System.getProperty(NAME)).isNull();
        System.setProperty(NAME, "7");
        assertThatThrownBy(() -> SystemProperties.with(NAME, "x", () -> SystemProperties.integer(NAME, 5)))
                .hasMessageContaining("is not a whole number");
        assertThat(System.getProperty(NAME)).isEqualTo("7");
    }

    @Test
    void anUnreadableValueIsRefusedWithItsNameNotReplacedByTheFallback() {
        for (String text : new String[] {"60s", "", "abc", "1e3", "2147483648", "1.5"}) {
            System.setProperty(NAME, text);
            assertThatThrownBy(() -> SystemProperties.integer(NAME, 5))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("-D" + NAME + "=" + text + " is not a whole number");
            assertThatThrownBy(() -> SystemProperties.seconds(NAME, Duration.ofSeconds(5)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(NAME);
        }
        System.setProperty(NAME, "9223372036854775808");
        assertThatThrownBy(() -> SystemProperties.longInteger(NAME, 0)).hasMessageContaining("not a whole number");
        System.setProperty(NAME, "yes");
        assertThatThrownBy(() -> SystemProperties.flag(NAME))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("-D" + NAME + "=yes is not true or false");
    }
}
