#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <string>
#include <vector>

#include "shardops/core/Error.hpp"
#include "shardops/core/NumberText.hpp"
#include "shardops/core/Settings.hpp"

namespace {

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value == nullptr)
      ::unsetenv(name);
    else
      ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_.c_str(), old_.c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// The words in any case (TRUE, On: job scripts write both), nothing else.
TEST(Settings, SwitchTakesOnOffWordsAndNothingElse) {
  const char* name = "SHARDOPS_STREAM_OUTPUTS";
  {
    ScopedEnv unset(name, nullptr);
    EXPECT_FALSE(shardops::switch_setting(name).has_value());
  }
  {
    ScopedEnv empty(name, "");
    EXPECT_FALSE(shardops::switch_setting(name).has_value());
  }
  for (const char* yes : {"1", "true", "yes", "on", "TRUE", "On", "Yes"}) {
    ScopedEnv set(name, yes);
    EXPECT_EQ(shardops::switch_setting(name), true) << yes;
  }
  for (const char* no : {"0", "false", "no", "off", "FALSE", "Off", "NO"}) {
    ScopedEnv set(name, no);
    EXPECT_EQ(shardops::switch_setting(name), false) << no;
  }
  for (const char* bad : {"2", "maybe", "ON ", " 1"}) {
    ScopedEnv set(name, bad);
    try {
      shardops::switch_setting(name);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const shardops::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name) + "='" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(Settings, WordsCountsAndSeconds) {
  {
    ScopedEnv set("SHARDOPS_MAP_INPUTS", "all");
    EXPECT_EQ(shardops::word_setting("SHARDOPS_MAP_INPUTS"), "all");
  }
  {
    ScopedEnv set("SHARDOPS_MAP_INPUTS", "2");
    EXPECT_THROW(shardops::word_setting("SHARDOPS_MAP_INPUTS"), shardops::InvalidArgument);
  }
  {
    ScopedEnv set("SHARDOPS_REUSE_MEMORY_MB", "512");
    EXPECT_EQ(shardops::count_setting("SHARDOPS_REUSE_MEMORY_MB"), 512ULL);
  }
  for (const char* bad : {"-1", "1.5", "12abc", "99999999999999999999999"}) {
    ScopedEnv set("SHARDOPS_REUSE_MEMORY_MB", bad);
    EXPECT_THROW(shardops::count_setting("SHARDOPS_REUSE_MEMORY_MB"), shardops::InvalidArgument) << bad;
  }
  {
    ScopedEnv set("SHARDOPS_LOCK_TIMEOUT", "2.5");
    EXPECT_EQ(shardops::seconds_setting("SHARDOPS_LOCK_TIMEOUT"), 2.5);
  }
  for (const char* bad : {"-1", "abc", "nan", "1e400", "inf"}) {
    ScopedEnv set("SHARDOPS_LOCK_TIMEOUT", bad);
    EXPECT_THROW(shardops::seconds_setting("SHARDOPS_LOCK_TIMEOUT"), shardops::InvalidArgument) << bad;
  }
}

// A program that loads the library may set a locale with a decimal comma (Python's
// locale.setlocale): settings still read "0.5" and messages still write "0.15". Where the
// machine has such a locale it is set for the test (Debian's `locales`); the rest holds anywhere.
TEST(Settings, NumbersReadAndWrittenWithAPointInAnyLocale) {
  bool comma = false;
  for (const char* name : {"de_DE.UTF-8", "fr_FR.UTF-8", "ru_RU.UTF-8", "de_DE.utf8"}) {
    if (std::setlocale(LC_ALL, name) != nullptr) {
      comma = std::strtod("0.5", nullptr) == 0.0;
      break;
    }
  }
  {
    ScopedEnv set("SHARDOPS_LOCK_TIMEOUT", "0.5");
    EXPECT_EQ(shardops::seconds_setting("SHARDOPS_LOCK_TIMEOUT"), 0.5) << (comma ? "under a decimal comma" : "");
  }
  {
    ScopedEnv set("SHARDOPS_LOCK_TIMEOUT", "0,5");
    EXPECT_THROW(shardops::seconds_setting("SHARDOPS_LOCK_TIMEOUT"), shardops::InvalidArgument);
  }
  EXPECT_EQ(shardops::fixed_text(0.153, 2), "0.15");
  EXPECT_EQ(shardops::fixed_text(300.4, 0), "300");
  EXPECT_EQ(shardops::decimal_of("+1e3"), 1000.0);
  EXPECT_FALSE(shardops::decimal_of("").has_value());
  EXPECT_FALSE(shardops::decimal_of("1.5s").has_value());
  std::setlocale(LC_ALL, "C");
}

TEST(Settings, CheckRefusesBadValuesAndNamesNearMisses) {
  {
    ScopedEnv bad("SHARDOPS_HUGE_PAGES", "maybe");
    EXPECT_THROW(shardops::check_settings(), shardops::InvalidArgument);
  }
  ScopedEnv misspelt("SHARDOPS_STREAM_OUTPUT", "0");
  ScopedEnv unrelated("SHARDOPS_BUILD_DIR", "/tmp/build");  // the scripts' own: not a job setting
  const std::vector<std::string> warnings = shardops::check_settings();
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("SHARDOPS_STREAM_OUTPUT is not a setting"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("did you mean SHARDOPS_STREAM_OUTPUTS?"), std::string::npos) << warnings[0];
}

TEST(Settings, SharedTextHasTheSettingsSetButNotTheTestHook) {
  ScopedEnv map("SHARDOPS_MAP_INPUTS", "0");
  ScopedEnv stream("SHARDOPS_STREAM_OUTPUTS", nullptr);
  ScopedEnv pause("SHARDOPS_TEST_PAUSE", "read:1");
  const std::string text = shardops::shared_settings_text();
  EXPECT_NE(text.find("SHARDOPS_MAP_INPUTS=0"), std::string::npos) << text;
  EXPECT_EQ(text.find("SHARDOPS_STREAM_OUTPUTS"), std::string::npos) << text;
  EXPECT_EQ(text.find("SHARDOPS_TEST_PAUSE"), std::string::npos) << text;
  ScopedEnv other("SHARDOPS_MAP_INPUTS", "all");
  EXPECT_NE(shardops::shared_settings_text(), text);
}

}  // namespace
