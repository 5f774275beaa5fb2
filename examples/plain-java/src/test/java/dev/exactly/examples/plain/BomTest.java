package dev.exactly.examples.plain;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * {@code dev.exactly:exactly-bom} manages every library module of the build (each at the build's version)
 * and nothing else, so that importing it is all a user needs to declare Exactly's modules without versions.
 */
class BomTest {
    private static final Path ROOT =
            Path.of(System.getProperty("repository.root")).normalize();
    /** Modules of the build that are not libraries a user depends on. */
    private static final Set<String> NOT_PUBLISHED = Set.of(
            "bom", "payments-service", "benchmarks", "payments-benchmark", "chaos-tests", "examples", "test-services");

    @Test
    void theBomManagesEveryLibraryModuleAtTheBuildsVersionAndNothingElse() throws Exception {
        Document root = parse(ROOT.resolve("pom.xml"));
        String version = child(root.getDocumentElement(), "version");
        Set<String> libraries = new TreeSet<>();
        for (String module : texts(root.getDocumentElement(), "modules", "module")) {
            if (NOT_PUBLISHED.contains(module)) {
                continue;
            }
            Document pom = parse(ROOT.resolve(module).resolve("pom.xml"));
            libraries.add(child(pom.getDocumentElement(), "artifactId"));
        }
        assertThat(libraries).contains("idempotency-core", "idempotency-spring-boot-starter");

        Document bom = parse(ROOT.resolve("bom/pom.xml"));
        Element project = bom.getDocumentElement();
        assertThat(child(project, "groupId")).isEqualTo("dev.exactly");
        assertThat(child(project, "artifactId")).isEqualTo("exactly-bom");
        assertThat(child(project, "version")).isEqualTo(version);
        assertThat(project.getElementsByTagName("parent").getLength())
                .as("no parent: only Exactly's versions")
                .isZero();
        Set<String> managed = new TreeSet<>();
        NodeList dependencies = project.getElementsByTagName("dependency");
        for (int i = 0; i < dependencies.getLength(); i++) {
            Element dependency = (Element) dependencies.item(i);
            assertThat(child(dependency, "groupId")).isEqualTo("dev.exactly");
            assertThat(child(dependency, "version")).isEqualTo("${project.version}");
            managed.add(child(dependency, "artifactId"));
        }
        assertThat(managed).isEqualTo(libraries);
    }

    private static Document parse(Path pom) throws Exception {
        assertThat(pom).exists();
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        try (var in = Files.newInputStream(pom)) {
            return factory.newDocumentBuilder().parse(in);
        }
    }

    /** The text of a direct child element. */
    private static String child(Element parent, String name) {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                return element.getTextContent().strip();
            }
        }
        throw new AssertionError(parent.getTagName() + " has no <" + name + ">");
    }

    private static List<String> texts(Element parent, String list, String item) {
        List<String> texts = new ArrayList<>();
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(list)) {
                NodeList items = element.getElementsByTagName(item);
                for (int i = 0; i < items.getLength(); i++) {
                    texts.add(items.item(i).getTextContent().strip());
                }
            }
        }
        return texts;
    }
}
