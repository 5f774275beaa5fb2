package dev.exactly.payments.browser;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium from the distribution's {@code chromium} and {@code chromium-driver} packages, driven
 * through the system chromedriver. The driver's path is given explicitly, so Selenium Manager is never
 * asked and nothing is downloaded. Each browser gets a fresh profile directory (its own localStorage),
 * removed when it quits. With {@code CI=true} a missing Chromium fails the test; elsewhere it is skipped
 * with the command that installs it.
 */
final class Chromium implements AutoCloseable {
    static final Path BINARY = Path.of("/usr/bin/chromium");
    static final Path DRIVER = Path.of("/usr/bin/chromedriver");
    static final Path SCREENSHOTS = Path.of("target", "screenshots");

    private final ChromeDriver driver;
    private final Path profile;

    private Chromium(ChromeDriver driver, Path profile) {
        this.driver = driver;
        this.profile = profile;
    }

    /** Starts a headless browser with an empty profile. */
    static Chromium start() {
        requireInstalled();
        Path profile;
        try {
            profile = Files.createTempDirectory("exactly-chromium-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(BINARY.toFile());
        options.addArguments(
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--window-size=1280,1500",
                "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort()
                .build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(30));
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        return new Chromium(driver, profile);
    }

    /** Fails under CI when the packages are missing, skips elsewhere. */
    static void requireInstalled() {
        boolean present = Files.isExecutable(BINARY) && Files.isExecutable(DRIVER);
        if (present) {
            return;
        }
        String message = "Chromium and its driver are needed at " + BINARY + " and " + DRIVER
                + ": apt-get install -y chromium chromium-driver";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            Assertions.fail(message + " (CI never skips the browser tests)");
        }
        Assumptions.abort(message);
    }

    ChromeDriver driver() {
        return driver;
    }

    /** Chrome DevTools: network conditions of the page, e.g. offline. */
    void network(boolean offline) {
        driver.executeCdpCommand("Network.enable", Map.of());
        driver.executeCdpCommand(
                "Network.emulateNetworkConditions",
                Map.of("offline", offline, "latency", 0, "downloadThroughput", -1, "uploadThroughput", -1));
    }

    /** Saves what the browser shows as {@code target/screenshots/<name>.png}. */
    Path screenshot(String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            Path target = SCREENSHOTS.resolve(name + ".png");
            Path taken = driver.getScreenshotAs(OutputType.FILE).toPath();
            Files.move(taken, target, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            driver.quit();
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // a temporary profile left behind is harmless
            }
        }
    }
}
