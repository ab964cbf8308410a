// tests/common/rules_table.hpp: the table-driven check of a family's validation rules (host tests of
// problem/*_rules.hpp): each row breaks one rule of a valid problem and names what validation must
// report first.
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "hipattn/platform/error.hpp"
#include "hipattn/problem/validate_toolkit.hpp"

namespace hipattn::testing {

// Parts the first issue's message must contain (the bad value, the rule's bound): one or several.
struct MessageWords {
  std::vector<std::string> words;
  MessageWords(const char* w) : words{w} {}  // NOLINT: implicit, so that a row may name one part bare
  MessageWords(std::initializer_list<const char*> ws) : words(ws.begin(), ws.end()) {}
};

template <class Params>
struct RejectedCase {
  const char* name;
  std::function<Params()> make;  // a valid problem with one rule broken
  ErrorCode code;
  const char* field;
  MessageWords words;
  size_t issues = 1;  // issues in the report (one mistake, one issue); 0: not checked
};

// Every row: validation fails with the row's code and field first, its message names the words,
// the report holds `issues` issues, and throw_if_error throws the same code and field.
template <class Params>
void expect_rejections(const std::vector<RejectedCase<Params>>& rows) {
  for (const RejectedCase<Params>& row : rows) {
    const ValidationReport r = validate(row.make());
    ASSERT_FALSE(r.ok()) << row.name;
    EXPECT_EQ(r.code(), row.code) << row.name << ": " << r.summary();
    EXPECT_EQ(r.field(), row.field) << row.name << ": " << r.summary();
    for (const std::string& w : row.words.words)
      EXPECT_NE(r.message().find(w), std::string::npos) << row.name << ": \"" << r.message() << "\" lacks \"" << w << "\"";
    if (row.issues > 0) EXPECT_EQ(r.size(), row.issues) << row.name << ": " << r.summary();
    try {
      throw_if_error(r);
      ADD_FAILURE() << row.name << ": no throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), row.code) << row.name;
      EXPECT_EQ(e.field(), row.field) << row.name;
    }
  }
}

}  // namespace hipattn::testing
