package dev.once.apps;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.springframework.boot.SpringBootVersion;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * The dependencies an application's doc page lists are its pom's, no more and no less: the
 * application a test starts is then the one a user following the page builds.
 *
 * <p>The page marks the snippet with {@code <!-- once-spring-apps/NAME: ... -->} on the line
 * before its {@code ```xml} fence. Pages show Boot 3's names; on Boot 4 an artifact is renamed as
 * the table between {@code <!-- boot4-names:begin -->} and {@code <!-- boot4-names:end -->} in
 * spring-boot.md says.
 */
public final class DocumentedDependencies {

  private static final Pattern NAME = Pattern.compile("`([^`:]+:[^`]+)`");

  private DocumentedDependencies() {}

  /** Asserts that the pom under test lists what {@code page} shows for the application {@code app}. */
  public static void assertPomMatches(String page, String app) throws Exception {
    Path docs = Path.of(System.getProperty("once.app.docs"));
    TreeSet<String> documented = new TreeSet<>();
    Map<String, String> boot4 = boot4Names(docs.resolve("spring-boot.md"));
    boolean onBoot4 = SpringBootVersion.getVersion().startsWith("4.");
    for (String name : snippet(docs.resolve(page), app)) {
      documented.add(onBoot4 ? boot4.getOrDefault(name, name) : name);
    }
    assertThat(pom(Path.of(System.getProperty("once.app.pom"))))
        .as("the dependencies of once-spring-apps/%s against docs/%s", app, page)
        .isEqualTo(documented);
  }

  /** groupId:artifactId of every dependency of the pom's own, test ones left out. */
  static TreeSet<String> pom(Path pom) throws Exception {
    Element project =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(pom.toFile())
            .getDocumentElement();
    TreeSet<String> names = new TreeSet<>();
    for (Element dependencies : children(project, "dependencies")) {
      for (Element d : children(dependencies, "dependency")) {
        if (!"test".equals(text(d, "scope"))) {
          names.add(text(d, "groupId") + ":" + text(d, "artifactId"));
        }
      }
    }
    return names;
  }

  /** groupId:artifactId of every dependency in the page's snippet for {@code app}. */
  static TreeSet<String> snippet(Path page, String app) throws Exception {
    List<String> lines = Files.readAllLines(page, StandardCharsets.UTF_8);
    String marker = "<!-- once-spring-apps/" + app + ":";
    int at = 0;
    while (at < lines.size() && !lines.get(at).contains(marker)) {
      at++;
    }
    assertThat(at).as("%s in %s", marker, page).isLessThan(lines.size());
    assertThat(lines.get(at + 1)).as("the line after %s", marker).isEqualTo("```xml");
    StringBuilder xml = new StringBuilder("<snippet>");
    for (int i = at + 2; !lines.get(i).equals("```"); i++) {
      xml.append(lines.get(i)).append('\n');
    }
    xml.append("</snippet>");
    NodeList found =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(new InputSource(new StringReader(xml.toString())))
            .getElementsByTagName("dependency");
    TreeSet<String> names = new TreeSet<>();
    for (int i = 0; i < found.getLength(); i++) {
      Element d = (Element) found.item(i);
      names.add(text(d, "groupId") + ":" + text(d, "artifactId"));
    }
    return names;
  }

  /** Boot 3's name of an artifact to Boot 4's, from the table in spring-boot.md. */
  static Map<String, String> boot4Names(Path page) throws IOException {
    String text = Files.readString(page, StandardCharsets.UTF_8);
    int begin = text.indexOf("<!-- boot4-names:begin -->");
    int end = text.indexOf("<!-- boot4-names:end -->");
    assertThat(begin).as("the Boot 4 names table in %s", page).isNotNegative().isLessThan(end);
    Map<String, String> names = new TreeMap<>();
    for (String row : text.substring(begin, end).split("\n")) {
      Matcher m = NAME.matcher(row);
      if (m.find()) {
        String boot3 = m.group(1);
        assertThat(m.find()).as("a Boot 4 name in %s", row).isTrue();
        names.put(boot3, m.group(1));
      }
    }
    return names;
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> found = new java.util.ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        found.add(e);
      }
    }
    return found;
  }

  private static String text(Element parent, String name) {
    List<Element> found = children(parent, name);
    return found.isEmpty() ? "" : found.get(0).getTextContent().trim();
  }
}
