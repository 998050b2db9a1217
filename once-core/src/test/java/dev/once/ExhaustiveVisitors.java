package dev.once;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;

/**
 * Checks what keeps a sealed type's visitor exhaustive, beyond what the compiler already checks:
 * the compiler makes every variant implement {@code accept} and every visitor implement every
 * method, but a default method on the visitor would quietly let a new variant fall into it.
 */
public final class ExhaustiveVisitors {

  private ExhaustiveVisitors() {}

  /** The visitor declares exactly one abstract method per permitted variant, and nothing else. */
  public static void assertExhaustive(Class<?> sealedType, Class<?> visitor) {
    assertThat(sealedType.isSealed()).as("%s is sealed", sealedType.getSimpleName()).isTrue();
    List<Method> methods =
        Arrays.stream(visitor.getDeclaredMethods()).filter(m -> !m.isSynthetic()).toList();
    assertThat(methods)
        .as("methods of %s", visitor.getName())
        .allSatisfy(
            m ->
                assertThat(Modifier.isAbstract(m.getModifiers()))
                    .as(
                        "%s is abstract: no default answers a variant it was not written for",
                        m.getName())
                    .isTrue());
    assertThat(methods)
        .allSatisfy(
            m -> assertThat(m.getParameterCount()).as("parameters of %s", m.getName()).isOne());
    assertThat(methods.stream().<Class<?>>map(m -> m.getParameterTypes()[0]))
        .as("one method per variant of %s", sealedType.getSimpleName())
        .containsExactlyInAnyOrder(sealedType.getPermittedSubclasses());
  }
}
