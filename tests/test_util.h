/* test_util.h: the smallest test framework that says what failed and where. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <math.h>
#include <stdio.h>

static int test_failures = 0;
static int test_checks = 0;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        test_checks++;                                                                             \
        if (!(cond)) {                                                                             \
            test_failures++;                                                                       \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#define EXPECT_NEAR(a, b, tol) EXPECT(fabs((double)(a) - (double)(b)) <= (tol), "%.17g vs %.17g", (double)(a), (double)(b))

static int test_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
    return test_failures ? 1 : 0;
}

#endif
