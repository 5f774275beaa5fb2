package dev.exactly.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The starter's tests run on the library versions Spring Boot's BOM manages, the ones its users get: the
 * jar each class comes from has the version the BOM (of the Boot release the starter is built against)
 * names. When Boot is upgraded, this fails until the starter's pom follows.
 */
class BootManagedVersionsTest {
    private static final Map<String, String> BOM = bomProperties();

    @ParameterizedTest(name = "{0}: {2}")
    @CsvSource({
        "io.lettuce.core.RedisClient, lettuce.version, Lettuce",
        "org.postgresql.Driver, postgresql.version, PostgreSQL JDBC driver",
        "com.zaxxer.hikari.HikariDataSource, hikaricp.version, HikariCP",
        "io.micrometer.core.instrument.MeterRegistry, micrometer.version, Micrometer",
        "tools.jackson.databind.ObjectMapper, jackson-bom.version, Jackson",
        "org.apache.catalina.startup.Tomcat, tomcat.version, Tomcat",
        "io.netty.channel.Channel, netty.version, Netty",
        "org.slf4j.LoggerFactory, slf4j.version, SLF4J",
        "org.jspecify.annotations.NullMarked, jspecify.version, JSpecify"
    })
    void theTestsRunOnTheVersionBootManages(String className, String bomProperty, String library) throws Exception {
        Path jar = Path.of(Class.forName(className)
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        // a jar of the local repository: .../<artifact>/<version>/<artifact>-<version>.jar
        String version = jar.getParent().getFileName().toString();
        assertThat(version)
                .as(
                        "%s on the test class path (%s) vs %s in Spring Boot's BOM: set the starter pom's property",
                        library, jar.getFileName(), bomProperty)
                .isEqualTo(BOM.get(bomProperty));
    }

    private static Map<String, String> bomProperties() {
        Path bom = Path.of(Objects.requireNonNull(
                System.getProperty("exactly.boot.bom"),
                "exactly.boot.bom: the path of Spring Boot's BOM, set by the starter's pom"));
        try (InputStream in = Files.newInputStream(bom)) {
            Element properties = (Element) DocumentBuilderFactory.newInstance()
                    .newDocumentBuilder()
                    .parse(in)
                    .getDocumentElement()
                    .getElementsByTagName("properties")
                    .item(0);
            Map<String, String> values = new HashMap<>();
            NodeList children = properties.getChildNodes();
            for (int i = 0; i < children.getLength(); i++) {
                Node child = children.item(i);
                if (child.getNodeType() == Node.ELEMENT_NODE) {
                    values.put(child.getNodeName(), child.getTextContent().strip());
                }
            }
            return values;
        } catch (Exception e) {
            throw new IllegalStateException("could not read " + bom, e);
        }
    }
}
