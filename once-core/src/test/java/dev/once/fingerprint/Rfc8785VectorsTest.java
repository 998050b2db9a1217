package dev.once.fingerprint;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The six RFC 8785 test vectors, byte for byte. They are read from the classpath copy, which is
 * always there, and also from the project's shared test data when it can be found, so that the two
 * copies cannot drift apart unnoticed.
 */
class Rfc8785VectorsTest {

  private static final List<String> NAMES =
      List.of("arrays", "french", "structures", "unicode", "values", "weird");

  static Stream<Arguments> vectors() {
    List<Arguments> all = new ArrayList<>();
    for (String name : NAMES) {
      all.add(Arguments.of("classpath", name, classpath("input", name), classpath("output", name)));
    }
    Path shared = sharedTestData();
    if (shared != null) {
      for (String name : NAMES) {
        all.add(
            Arguments.of(
                "shared", name, file(shared, "input", name), file(shared, "output", name)));
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("vectors")
  void canonicalisesEveryVectorByteForByte(
      String source, String name, byte[] input, byte[] expected) {
    assertThat(JsonCanonicalizer.canonicalize(input)).as(name).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("vectors")
  void canonicalFormIsAFixedPoint(String source, String name, byte[] input, byte[] expected) {
    assertThat(JsonCanonicalizer.canonicalize(expected)).as(name).isEqualTo(expected);
  }

  /**
   * Fingerprints hash numbers exactly, which departs from RFC 8785 only where the nearest double
   * loses digits. Of the vectors, that is one number: values.json's 333333333.33333329, which RFC
   * 8785 turns into 333333333.3333333, a different number.
   */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("vectors")
  void exactNumbersDepartFromTheVectorsOnlyWhereADoubleLosesDigits(
      String source, String name, byte[] input, byte[] expected) {
    String exact = new String(JsonCanonicalizer.canonicalizeExact(input), StandardCharsets.UTF_8);
    String jcs = new String(expected, StandardCharsets.UTF_8);
    assertThat(exact)
        .as(name)
        .isEqualTo(
            name.equals("values") ? jcs.replace("333333333.3333333", "333333333.33333329") : jcs);
    assertThat(JsonCanonicalizer.canonicalizeExact(expected)).as(name).isEqualTo(expected);
  }

  private static byte[] classpath(String kind, String name) {
    String resource = "/jcs/" + kind + "/" + name + ".json";
    try (InputStream in = Rfc8785VectorsTest.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("test vector missing from the classpath: " + resource);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] file(Path root, String kind, String name) {
    try {
      return Files.readAllBytes(root.resolve("jcs").resolve(kind).resolve(name + ".json"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code once.testdata} as surefire sets it, else {@code shared/testdata} found walking up. */
  private static Path sharedTestData() {
    String property = System.getProperty("once.testdata");
    if (property != null && Files.isDirectory(Paths.get(property, "jcs"))) {
      return Paths.get(property);
    }
    for (Path dir = Paths.get("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      for (Path candidate :
          List.of(dir.resolve("shared/testdata"), dir.resolve("../shared/testdata"))) {
        if (Files.isDirectory(candidate.resolve("jcs"))) {
          return candidate.normalize();
        }
      }
    }
    return null;
  }
}
