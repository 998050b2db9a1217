package dev.once.servlet;

import static dev.once.servlet.Problem.assertProblem;

import dev.once.http.ProblemType;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * What only a servlet container has: a context path. DESIGN §4's rows run through the contract kit
 * in {@link ServletSemanticsTest}.
 */
class ContextPathTest {

  @Test
  void routesAreMatchedOnThePathInsideTheApplication() throws Exception {
    try (GuardedApp mounted = GuardedApp.at("/shop")) {
      HttpResponse<String> r = mounted.postJson("/required/api/payments", null, "{}");

      assertProblem(r, ProblemType.KEY_MISSING);
    }
  }
}
